import { BadRequestException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { canonicalMethod, chooseDialect, negotiateVersion, type Dialect } from '@app/a2a';
import { PAYLOAD_LIMITS, RelayError } from '@app/contracts';
import { sendRestErrorForPath } from '../errors/rest-errors';
import { renderRelayError } from '../errors/json-rpc-errors';
import type { JsonRpcResponse } from '../errors/json-rpc-errors';

/** The largest request body the relay reads: 1 MiB, less when NATS carries less (see `requestBodyLimit`). */
export const JSON_RPC_MAX_BODY_BYTES = PAYLOAD_LIMITS.requestBodyBytes;

/** A body that was not valid JSON; the JSON-RPC endpoint answers it with -32700. */
export class UnparseableJson {
  constructor(readonly detail: string) {}
}

const JSON_CONTENT_TYPE = /^\s*application\/json\s*(;|$)/i;

/** The two bindings of the agent endpoints: JSON-RPC (`POST /a2a`, `POST /a2a/{handle}`) and HTTP+JSON (`/a2a/{handle}/…`). */
export type AgentBinding = 'json-rpc' | 'http-json';

/** The route config that marks a route as one binding of the agent endpoints (`@RouteConfig(agentBinding('json-rpc'))`). */
export function agentBinding(binding: AgentBinding): { agentBinding: AgentBinding } {
  return { agentBinding: binding };
}

/** What of a request says which route it matched (Fastify routes before its hooks run). */
export interface RoutedRequest {
  routeOptions?: { config?: unknown };
}

/** The agent-endpoint binding of the route a request matched, as its controller declared it; null for any other route. */
export function bindingOf(request: RoutedRequest): AgentBinding | null {
  const config = request.routeOptions?.config as { agentBinding?: AgentBinding } | undefined;
  return config?.agentBinding ?? null;
}

/** The body types the HTTP+JSON binding reads (A2A v1.0 prefers `application/a2a+json`). */
const REST_CONTENT_TYPE = /^\s*application\/(a2a\+)?json\s*(;|$)/i;

/** The dialect errors are rendered in before a call's own dialect is known: the version header's. */
export function preliminaryDialect(headers: Record<string, string | string[] | undefined>): Dialect {
  try {
    return negotiateVersion(headers['a2a-version']) === '1.0' ? { kind: 'a2a', version: '1.0' } : { kind: 'agentrelay' };
  } catch {
    return { kind: 'agentrelay' };
  }
}

/**
 * The dialect of a body that was refused before it was parsed: the version header's, or, without
 * one, the A2A v0.3 dialect when the body names a standard A2A method.
 */
function sniffedDialect(headers: Record<string, string | string[] | undefined>, body: Buffer | undefined): Dialect {
  const preliminary = preliminaryDialect(headers);
  if (preliminary.kind === 'a2a' || body === undefined) return preliminary;
  try {
    const envelope = JSON.parse(body.toString('utf8')) as { method?: unknown; params?: unknown };
    const canonical = typeof envelope.method === 'string' ? canonicalMethod(envelope.method) : undefined;
    return canonical ? chooseDialect('0.3', canonical, envelope.params, envelope.method as string) : preliminary;
  } catch {
    return preliminary;
  }
}

export function sendJsonRpcError(
  reply: FastifyReply,
  headers: FastifyRequest['headers'],
  error: RelayError,
  id: string | number | null = null,
  dialect: Dialect = preliminaryDialect(headers),
): void {
  const rendered = renderRelayError(error, dialect);
  const body: JsonRpcResponse = { jsonrpc: '2.0', id, error: rendered.error };
  reply.code(rendered.status).header('content-type', 'application/json; charset=utf-8').send(body);
}

function payloadTooLarge(limit: number): RelayError {
  return new RelayError('payload_too_large', `Request body exceeds ${limit} bytes`, { limit_bytes: limit });
}

async function readLimited(payload: NodeJS.ReadableStream, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of payload as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += buffer.length;
    if (size > limit) return undefined;
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

/** Answers a call from its raw body (undefined: not a POST) before it is parsed for its route (a caller at its limit); true when it did. */
export type EarlyAnswer = (request: FastifyRequest, reply: FastifyReply, body: Buffer | undefined) => Promise<boolean>;

/**
 * HTTP plumbing of the agent endpoints (both bindings), installed on the Fastify instance before it listens:
 * - a body over `bodyLimit` (1 MiB at most) on `/a2a…` is answered 413 with a JSON-RPC error body (declared length or not);
 * - `application/json` bodies are parsed here, and on `/a2a…` unparseable JSON reaches the
 *   controller as an `UnparseableJson` (answered -32700) instead of Fastify's 400;
 * - `answerEarly` may answer a call from its raw body, before anything else reads it.
 */
export function configureAgentEndpointHttp(app: NestFastifyApplication, bodyLimit = JSON_RPC_MAX_BODY_BYTES, answerEarly?: EarlyAnswer): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('preParsing', async (request, reply, payload) => {
    const binding = bindingOf(request);
    if (binding === null) return payload;
    if (request.method !== 'POST') {
      if (answerEarly) await answerEarly(request, reply, undefined);
      return payload;
    }
    const rest = binding === 'http-json';
    const refuse = (error: RelayError, body?: Buffer): void => {
      if (rest) sendRestErrorForPath(request.url, reply, error);
      else sendJsonRpcError(reply, request.headers, error, null, sniffedDialect(request.headers, body));
    };
    const contentType = request.headers['content-type'] ?? '';
    const declared = Number(request.headers['content-length']);
    // An HTTP+JSON call without a body (a cancel, a subscribe) needs no content type.
    const bodyless =
      rest && contentType === '' && (declared === 0 || (request.headers['content-length'] === undefined && !request.headers['transfer-encoding']));
    if (!bodyless && !(rest ? REST_CONTENT_TYPE : JSON_CONTENT_TYPE).test(contentType)) {
      reply.header('connection', 'close');
      const body = Number.isFinite(declared) && declared > bodyLimit ? undefined : await readLimited(payload, bodyLimit);
      refuse(new RelayError('unsupported_media_type', `Content-Type must be application/json, not ${contentType ? `'${contentType}'` : 'missing'}`), body);
      return Readable.from([]);
    }
    if (Number.isFinite(declared) && declared > bodyLimit) {
      // The body stays unread: close the connection after answering.
      reply.header('connection', 'close');
      refuse(payloadTooLarge(bodyLimit));
      return payload;
    }
    const body = await readLimited(payload, bodyLimit);
    if (body === undefined) {
      reply.header('connection', 'close');
      refuse(payloadTooLarge(bodyLimit));
      return Readable.from([]);
    }
    if (answerEarly && (await answerEarly(request, reply, body))) return Readable.from([]);
    const replacement = Readable.from([body]) as Readable & { receivedEncodedLength?: number };
    replacement.receivedEncodedLength = body.length;
    return replacement;
  });
  const parseJson = (request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void): void => {
    const text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
    const binding = bindingOf(request);
    const rest = binding === 'http-json';
    // An HTTP+JSON call may come without a body even when it names a content type.
    if (rest && text.trim() === '') {
      done(null, undefined);
      return;
    }
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      if (binding !== null) {
        done(null, new UnparseableJson((error as Error).message));
        return;
      }
      done(new BadRequestException(`Invalid JSON body: ${(error as Error).message}`), undefined);
    }
  };
  app.useBodyParser('application/json', { bodyLimit: JSON_RPC_MAX_BODY_BYTES }, parseJson);
  app.useBodyParser('application/a2a+json', { bodyLimit: JSON_RPC_MAX_BODY_BYTES }, parseJson);
}
