import { createHmac } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@app/contracts';

/**
 * The Standard Webhooks signature: base64 HMAC-SHA256, keyed with the secret's base64-decoded
 * bytes, of `<webhook-id>.<webhook-timestamp>.<body>`, as `v1,<signature>`.
 */
export function signWebhook(secret: string, webhookId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${webhookId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${signature}`;
}

/** The three Standard Webhooks headers of one request. */
export function standardWebhookHeaders(secret: string, webhookId: string, body: string, now = Date.now()): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, webhookId, timestamp, body),
  };
}
