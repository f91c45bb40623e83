import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { checkWebhookUrl, guardedLookup, type PrivateTargets } from '../deliveries/ssrf-guard';

/** An mTLS client identity (PEM), and the CAs the server's certificate is checked against when given. */
export interface ClientTls {
  cert: string;
  key: string;
  ca: string | null;
}

export interface GuardedFetchOptions {
  allowPrivate: PrivateTargets;
  userAgent: string;
  /** The longest the relay waits for the answer's headers. */
  timeoutMs: number;
  /** Presented to https servers (http requests carry no certificate). */
  tls?: ClientTls | null;
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
  return headers;
}

async function bodyOf(init: RequestInit | undefined): Promise<Buffer | undefined> {
  const body = init?.body;
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.from(await new Response(body).arrayBuffer());
}

/**
 * A `fetch` for requests to upstream A2A agents (what the official SDK client is given): the URL
 * through the SSRF guard before connecting and every address it resolves to at connect time,
 * redirects never followed, a timeout until the answer's headers, the caller's abort signal
 * honoured. The answer's body streams (SSE).
 */
export function guardedFetch(options: GuardedFetchOptions): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const target = typeof input === 'string' || input instanceof URL ? input.toString() : input.url;
    const url = checkWebhookUrl(target, options.allowPrivate);
    const body = await bodyOf(init);
    const headers = { 'user-agent': options.userAgent, ...headersOf(init), ...(body ? { 'content-length': String(body.length) } : {}) };
    const secure = url.protocol === 'https:';
    const transport = secure ? https : http;
    const tls = secure && options.tls ? { cert: options.tls.cert, key: options.tls.key, ...(options.tls.ca ? { ca: options.tls.ca } : {}) } : {};
    return new Promise<Response>((resolve, reject) => {
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      const outgoing = transport.request(
        url,
        { method: init?.method ?? 'GET', headers, lookup: guardedLookup(options.allowPrivate), agent: false, ...tls },
        (incoming) => {
          clearTimeout(timer);
          const status = incoming.statusCode ?? 502;
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
            else if (value !== undefined) responseHeaders.set(name, value);
          }
          const noBody = status === 204 || status === 304 || init?.method === 'HEAD';
          if (noBody) incoming.resume();
          resolve(new Response(noBody ? null : (Readable.toWeb(incoming) as ReadableStream<Uint8Array>), { status, headers: responseHeaders }));
        },
      );
      const timer = setTimeout(() => outgoing.destroy(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
      signal?.addEventListener('abort', () => outgoing.destroy(new Error('aborted')), { once: true });
      // TLS 1.3: a server that refuses the client certificate resets the connection after the handshake (the client sees no alert).
      let handshakeDone = false;
      if (secure) outgoing.once('socket', (socket) => socket.once('secureConnect', () => (handshakeDone = true)));
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        if (handshakeDone && options.tls && error.code === 'ECONNRESET') {
          reject(
            new Error(`the server closed the TLS connection right after the handshake: it may not accept the client certificate (${error.message})`, {
              cause: error,
            }),
          );
          return;
        }
        reject(error);
      });
      outgoing.end(body);
    });
  };
}

/** Reads a JSON document (an agent card) of at most `maxBytes` through `guardedFetch`. */
export async function fetchJson(url: string, maxBytes: number, fetchImpl: typeof fetch): Promise<unknown> {
  const response = await fetchImpl(url, { headers: { accept: 'application/json' }, redirect: 'manual' });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw new Error(`HTTP ${response.status}`);
  }
  const reader = response.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (reader) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error('not JSON');
  }
}
