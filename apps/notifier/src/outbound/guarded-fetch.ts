import http from 'node:http';
import https from 'node:https';
import { pipeline, Readable, Transform, type TransformCallback } from 'node:stream';
import { checkWebhookUrl, guardedLookup, type PrivateTargets } from './ssrf-guard';

/** An mTLS client identity (PEM), and the CAs the server's certificate is checked against when given. */
export interface ClientTls {
  cert: string;
  key: string;
  ca: string | null;
}

export interface GuardedFetchOptions {
  allowPrivate: PrivateTargets;
  userAgent: string;
  /**
   * The longest one exchange takes, headers and body: an answer not read whole by then is cut off.
   * A stream (`text/event-stream`) is held to it until its headers; its events have their own deadlines.
   */
  timeoutMs: number;
  /** The most bytes of one answer (of a stream: of one event) read; past it the connection is closed. */
  maxAnswerBytes: number;
  /** Presented to https servers (http requests carry no certificate). */
  tls?: ClientTls | null;
  /**
   * Keeps connections open between requests (for a fetch that is kept and used again): each one
   * stays with the address the guard allowed when it was made, and an idle one is closed after
   * KEPT_IDLE_MS (sooner when the server says it closes sooner).
   */
  keepAlive?: boolean;
}

/** How long a kept connection may stay idle: under the 5 s after which Node's servers close theirs. */
const KEPT_IDLE_MS = 4000;
/** Idle connections kept per fetch and server. */
const KEPT_IDLE_PER_SERVER = 16;

/** An answer (or one event of a stream) longer than the relay reads: the connection was closed there. */
export class AnswerTooLargeError extends Error {
  constructor(readonly limitBytes: number) {
    super(`the answer is larger than ${limitBytes} bytes: not read further`);
    this.name = 'AnswerTooLargeError';
  }
}

/** An exchange that did not end within its deadline (headers and body). */
export class DeadlineExceededError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no complete answer within ${timeoutMs} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/** An answer read whole before it is handed on, with its bytes (which a caller may read without reading the body again). */
export class ReadAnswer extends Response {
  constructor(
    readonly bytes: Buffer,
    init: ResponseInit,
  ) {
    super(bytes, init);
  }
}

/** The error, or one of its causes, of this class (the SDK wraps what a body read threw). */
export function causeOf<T extends Error>(error: unknown, type: new (...args: never[]) => T): T | null {
  for (let current = error, depth = 0; current && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof type) return current;
  }
  return null;
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

const LF = 0x0a;
const CR = 0x0d;

/**
 * Counts the bytes of a server-sent event stream as they arrive and fails when one event passes
 * `maxBytes`, each counted from the blank line that ends the one before.
 */
function eventLimit(maxBytes: number): Transform {
  let counted = 0;
  let atLineStart = false;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      for (const byte of chunk) {
        if (byte === CR) continue;
        if (byte === LF) {
          if (atLineStart) counted = 0;
          atLineStart = true;
        } else atLineStart = false;
        counted += 1;
        if (counted > maxBytes) break;
      }
      if (counted > maxBytes) callback(new AnswerTooLargeError(maxBytes));
      else callback(null, chunk);
    },
  });
}

/**
 * A `fetch` for requests to upstream A2A agents (what the official SDK client is given): the URL
 * through the SSRF guard before connecting and every address it resolves to at connect time,
 * redirects never followed, one deadline over headers and body, a byte limit on the answer read as
 * it streams, the caller's abort signal honoured. An answer is read whole before the fetch
 * resolves (a `ReadAnswer`), so the deadline, the limit or a connection lost midway fails the fetch
 * itself; a stream's body (SSE) is handed on as it comes, each event held to the limit.
 */
export function guardedFetch(options: GuardedFetchOptions): typeof fetch {
  const kept: { http?: http.Agent; https?: https.Agent } = {};
  const agentFor = (secure: boolean): http.Agent | false => {
    if (!options.keepAlive) return false;
    const settings = { keepAlive: true, timeout: KEPT_IDLE_MS, maxFreeSockets: KEPT_IDLE_PER_SERVER };
    return secure ? (kept.https ??= new https.Agent(settings)) : (kept.http ??= new http.Agent(settings));
  };
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
      /** The answer's body once its headers came: the deadline and an abort end it there. */
      let answer: Transform | null = null;
      const stop = (error: Error): void => {
        settled();
        if (answer) answer.destroy(error);
        outgoing.destroy(error);
        // A fetch not resolved yet (no headers, or an answer still being read) fails with the reason itself.
        reject(error);
      };
      const onAbort = (): void => stop(new Error('aborted'));
      const settled = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const outgoing = transport.request(
        url,
        { method: init?.method ?? 'GET', headers, lookup: guardedLookup(options.allowPrivate), agent: agentFor(secure), ...tls },
        (incoming) => {
          const status = incoming.statusCode ?? 502;
          const responseHeaders = new Headers();
          for (const [name, value] of Object.entries(incoming.headers)) {
            if (Array.isArray(value)) for (const item of value) responseHeaders.append(name, item);
            else if (value !== undefined) responseHeaders.set(name, value);
          }
          const noBody = status === 204 || status === 304 || init?.method === 'HEAD';
          if (noBody) {
            settled();
            incoming.resume();
            resolve(new Response(null, { status, headers: responseHeaders }));
            return;
          }
          const streaming = /^text\/event-stream\b/i.test(responseHeaders.get('content-type') ?? '');
          if (!streaming) {
            const declared = Number(responseHeaders.get('content-length') ?? NaN);
            if (declared > options.maxAnswerBytes) return stop(new AnswerTooLargeError(options.maxAnswerBytes));
            readWhole(incoming, options.maxAnswerBytes, stop, (bytes) => {
              settled();
              resolve(new ReadAnswer(bytes, { status, headers: responseHeaders }));
            });
            return;
          }
          // A stream's events come when they come: the reader holds them to its own deadlines.
          clearTimeout(timer);
          answer = eventLimit(options.maxAnswerBytes);
          pipeline(incoming, answer, (error) => {
            settled();
            // Past the limit: the connection goes with it (nothing more is read).
            if (error) outgoing.destroy();
          });
          resolve(new Response(Readable.toWeb(answer) as ReadableStream<Uint8Array>, { status, headers: responseHeaders }));
        },
      );
      const timer = setTimeout(() => stop(new DeadlineExceededError(options.timeoutMs)), options.timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      // TLS 1.3: a server that refuses the client certificate resets the connection after the handshake (the client sees no alert).
      let handshakeDone = false;
      if (secure) outgoing.once('socket', (socket) => socket.once('secureConnect', () => (handshakeDone = true)));
      outgoing.on('error', (error: NodeJS.ErrnoException) => {
        settled();
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

/** Reads an answer's body whole, failing (`stop`) past `maxBytes` or when the connection closes before its end. */
function readWhole(incoming: http.IncomingMessage, maxBytes: number, stop: (error: Error) => void, done: (bytes: Buffer) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  incoming.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBytes) stop(new AnswerTooLargeError(maxBytes));
    else chunks.push(chunk);
  });
  incoming.on('end', () => done(Buffer.concat(chunks, size)));
  incoming.on('error', (error) => stop(error));
  incoming.on('close', () => {
    if (!incoming.complete) stop(new Error('the connection closed before the answer ended'));
  });
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
