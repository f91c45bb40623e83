import { randomBytes } from 'node:crypto';
import { WEBHOOK_SECRET_PREFIX } from '@app/contracts';

/** A new webhook signing secret (Standard Webhooks): `whsec_` + base64 of 32 random bytes. */
export function generateWebhookSecret(): string {
  return `${WEBHOOK_SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Whether a value is a webhook signing secret: `whsec_` + base64 of 24 to 64 bytes. */
export function isWebhookSecret(value: string): boolean {
  if (!value.startsWith(WEBHOOK_SECRET_PREFIX)) return false;
  const encoded = value.slice(WEBHOOK_SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded) || encoded.length % 4 !== 0) return false;
  const bytes = Buffer.from(encoded, 'base64').length;
  return bytes >= 24 && bytes <= 64;
}
