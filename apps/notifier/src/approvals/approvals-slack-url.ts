import { isIP } from 'node:net';
import { checkWebhookUrl, SsrfRefusedError } from '../outbound/ssrf-guard';

const LOOPBACK_NAMES = new Set(['localhost', 'localhost.']);

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(host)) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * Checks an org's approvals Slack URL as every outbound request is checked (the SSRF guard's
 * rules), and more strictly: https, or http to a loopback address only while the guard is off
 * (RELAY_WEBHOOK_ALLOW_PRIVATE, for tests and development).
 */
export function checkApprovalsSlackUrl(url: string, allowPrivate: boolean): URL {
  const parsed = checkWebhookUrl(url, allowPrivate);
  if (parsed.protocol === 'https:') return parsed;
  if (allowPrivate && isLoopbackHost(parsed.hostname)) return parsed;
  throw new SsrfRefusedError(
    allowPrivate
      ? 'it must be https, or http to a loopback address'
      : 'it must be https (http only to a loopback address while RELAY_WEBHOOK_ALLOW_PRIVATE=true)',
  );
}
