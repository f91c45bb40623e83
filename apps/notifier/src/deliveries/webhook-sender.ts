import http from 'node:http';
import https from 'node:https';
import { checkWebhookUrl, guardedLookup, SsrfRefusedError } from '../outbound/ssrf-guard';
import { parseRetryAfter } from '../outbound/retry-schedule';
import type { SendOutcome } from '../outbound/send-outcome';

export interface OutboundRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface SenderOptions {
  /** The deadline of the whole exchange: connecting, sending, the answer's headers and its body. */
  timeoutMs: number;
  /** The most bytes of the answer read (the status is what counts); past it the connection is closed. */
  maxResponseBytes: number;
  allowPrivate: boolean;
  userAgent: string;
}

/**
 * POSTs one webhook request: a hard timeout over the whole exchange, redirects never followed
 * (a 3xx is a failure), targets checked against SSRF before connecting and at DNS resolution.
 */
export function sendWebhook(request: OutboundRequest, options: SenderOptions, signal?: AbortSignal): Promise<SendOutcome> {
  const startedAt = Date.now();
  const finish = (partial: Omit<SendOutcome, 'durationMs'>): SendOutcome => ({ ...partial, durationMs: Date.now() - startedAt });
  let url: URL;
  try {
    url = checkWebhookUrl(request.url, options.allowPrivate);
  } catch (error) {
    return Promise.resolve(finish({ ok: false, retryable: false, statusCode: null, retryAfterMs: null, error: `refused: ${(error as Error).message}` }));
  }
  const transport = url.protocol === 'https:' ? https : http;
  const body = Buffer.from(request.body, 'utf8');
  return new Promise((resolve) => {
    let settled = false;
    const settle = (outcome: SendOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const outgoing = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'content-length': String(body.length), 'user-agent': options.userAgent },
        lookup: guardedLookup(options.allowPrivate),
        agent: false,
      },
      (response) => {
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received > options.maxResponseBytes) response.destroy();
        });
        const done = (): void => {
          const status = response.statusCode ?? 0;
          const ok = status >= 200 && status < 300;
          const retryable = status === 429 || status >= 500;
          const retryAfter = response.headers['retry-after'];
          settle(
            finish({
              ok,
              retryable: !ok && retryable,
              statusCode: status,
              retryAfterMs: retryable ? parseRetryAfter(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) : null,
              error: ok ? null : status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`,
            }),
          );
        };
        response.on('end', done);
        response.on('close', done);
        response.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      outgoing.destroy(new Error(`timed out after ${options.timeoutMs} ms`));
    }, options.timeoutMs);
    const onAbort = (): void => {
      outgoing.destroy(new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort);
    outgoing.on('error', (error) => {
      const refused = error instanceof SsrfRefusedError;
      settle(finish({ ok: false, retryable: !refused, statusCode: null, retryAfterMs: null, error: refused ? `refused: ${error.message}` : error.message }));
    });
    outgoing.end(body);
  });
}
