import type { UpstreamCallMethod, UpstreamCallOutcome } from '@app/contracts';
import { SsrfRefusedError } from '../../outbound/ssrf-guard';
import { AnswerTooLargeError, causeOf, DeadlineExceededError, ReadAnswer } from '../../outbound/guarded-fetch';

/** JSON-RPC method names of both versions (v0.3 `message/send`, v1.0 `SendMessage`) as the relay counts them. */
const JSON_RPC_METHODS: Record<string, UpstreamCallMethod> = {
  SendMessage: 'SendMessage',
  'message/send': 'SendMessage',
  SendStreamingMessage: 'SendStreamingMessage',
  'message/stream': 'SendStreamingMessage',
  GetTask: 'GetTask',
  'tasks/get': 'GetTask',
  CancelTask: 'CancelTask',
  'tasks/cancel': 'CancelTask',
  ListTasks: 'ListTasks',
  'tasks/list': 'ListTasks',
  SubscribeToTask: 'SubscribeToTask',
  'tasks/resubscribe': 'SubscribeToTask',
};

/** The A2A method of an HTTP+JSON request, by its path (v0.3 paths start with `/v1`). */
function restMethodOf(httpMethod: string, path: string): UpstreamCallMethod {
  if (/\/message:send$/.test(path)) return 'SendMessage';
  if (/\/message:stream$/.test(path)) return 'SendStreamingMessage';
  if (/\/tasks\/[^/]+:cancel$/.test(path)) return 'CancelTask';
  if (/\/tasks\/[^/]+:(subscribe|resubscribe)$/.test(path)) return 'SubscribeToTask';
  if (httpMethod === 'GET' && /\/tasks\/[^/:]+$/.test(path)) return 'GetTask';
  if (httpMethod === 'GET' && /\/tasks$/.test(path)) return 'ListTasks';
  return 'other';
}

/** Which A2A method an HTTP request to an upstream is: the JSON-RPC body's `method`, else the HTTP+JSON path. */
export function callMethodOf(httpMethod: string, url: URL, body: string | null): UpstreamCallMethod {
  if (body !== null && body.startsWith('{')) {
    try {
      const method = (JSON.parse(body) as { method?: unknown }).method;
      if (typeof method === 'string') return JSON_RPC_METHODS[method] ?? 'other';
    } catch {
      // Not JSON-RPC: read the path.
    }
  }
  return restMethodOf(httpMethod.toUpperCase(), url.pathname);
}

const TLS_CODES = /^(ERR_SSL_|ERR_TLS_|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|EPROTO$|HOSTNAME_MISMATCH|ERR_OSSL)/;

/** Why a request got no (whole) answer: the SSRF guard, a timeout, an answer too large, a certificate either side refused, or the connection. */
export function failureKindOf(error: unknown): UpstreamCallOutcome {
  const cause = (error as { cause?: unknown })?.cause;
  if (error instanceof SsrfRefusedError || cause instanceof SsrfRefusedError) return 'refused';
  if (causeOf(error, AnswerTooLargeError)) return 'too_large';
  if (causeOf(error, DeadlineExceededError)) return 'timeout';
  const code = String((error as { code?: unknown })?.code ?? (cause as { code?: unknown })?.code ?? '');
  const message = (error as Error)?.message ?? '';
  if (TLS_CODES.test(code) || /certificate|ssl|tls alert|handshake/i.test(message)) return 'tls';
  if (/no answer within|timeout|timed out|aborted/i.test(message) || code === 'ETIMEDOUT') return 'timeout';
  return 'connection';
}

export function statusKindOf(status: number): UpstreamCallOutcome {
  if (status < 400) return 'ok';
  if (status === 401 || status === 403) return 'unauthorized';
  return status < 500 ? 'http_4xx' : 'http_5xx';
}

/** One request to an upstream agent's server as it ended. */
export interface ObservedCall {
  method: UpstreamCallMethod;
  outcome: UpstreamCallOutcome;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The relay task the request was about (its `X-AgentRelay-Task` header), if any. */
  taskId: string | null;
  at: Date;
}

const ERROR_MEMBER = Buffer.from('"error"');

/** The JSON-RPC error of a JSON answer, if it is one (an answer that never names `error` is not parsed). */
function jsonRpcErrorOf(response: Response, body: Buffer): string | null {
  if (!/application\/json/i.test(response.headers.get('content-type') ?? '') || !body.includes(ERROR_MEMBER)) return null;
  try {
    const answer = JSON.parse(body.toString('utf8')) as { error?: { code?: unknown; message?: unknown } };
    if (!answer || typeof answer !== 'object' || !answer.error) return null;
    return `JSON-RPC error ${String(answer.error.code)}: ${String(answer.error.message)}`.slice(0, 500);
  } catch {
    return null;
  }
}

/**
 * Wraps a `fetch` to an upstream agent: each request's A2A method (or `method` when given: the
 * card, a token), its outcome and its time go to `observe`. An answer is recorded once it is read
 * whole (within the inner fetch's deadline and byte limit; a `ReadAnswer` is, and is handed on as
 * it is) so that one cut off is recorded as such; a stream is recorded at its headers and handed
 * on as it comes.
 */
export function observedFetch(inner: typeof fetch, observe: (call: ObservedCall) => void, method?: UpstreamCallMethod): typeof fetch {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const target = new URL(typeof input === 'string' || input instanceof URL ? input.toString() : input.url);
    const body = typeof init?.body === 'string' ? init.body : null;
    const called = method ?? callMethodOf(init?.method ?? 'GET', target, body);
    const taskId = new Headers(init?.headers).get('x-agentrelay-task');
    const at = new Date();
    const startedAt = performance.now();
    const done = (outcome: UpstreamCallOutcome, statusCode: number | null, error: string | null) =>
      observe({ method: called, outcome, statusCode, durationMs: Math.round(performance.now() - startedAt), error, taskId, at });
    const failed = (error: unknown, statusCode: number | null): never => {
      done(failureKindOf(error), statusCode, ((error as Error)?.message ?? String(error)).slice(0, 500));
      throw error;
    };
    let response: Response;
    try {
      response = await inner(input, init);
    } catch (error) {
      return failed(error, null);
    }
    const kind = statusKindOf(response.status);
    if (/^text\/event-stream\b/i.test(response.headers.get('content-type') ?? '') || response.body === null) {
      done(kind, response.status, kind === 'ok' ? null : `HTTP ${response.status}`);
      return response;
    }
    let answer: Buffer;
    try {
      answer = response instanceof ReadAnswer ? response.bytes : Buffer.from(await response.arrayBuffer());
    } catch (error) {
      return failed(error, response.status);
    }
    if (kind !== 'ok') done(kind, response.status, `HTTP ${response.status}`);
    else {
      const rpcError = body !== null ? jsonRpcErrorOf(response, answer) : null;
      done(rpcError ? 'a2a_error' : 'ok', response.status, rpcError);
    }
    return response instanceof ReadAnswer
      ? response
      : new ReadAnswer(answer, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
