import { BadRequestException } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { negotiateVersion, type Dialect } from '@app/a2a';
import { PAYLOAD_LIMITS, RelayError } from '@app/contracts';
import { renderRelayError } from './json-rpc-errors';
import type { JsonRpcResponse } from './json-rpc.types';

/** The largest request body the relay reads: 1 MiB, less when NATS carries less (see `requestBodyLimit`). */
export const JSON_RPC_MAX_BODY_BYTES = PAYLOAD_LIMITS.requestBodyBytes;

/** A body that was not valid JSON; the JSON-RPC endpoint answers it with -32700. */
export class UnparseableJson {
  constructor(readonly detail: string) {}
}

const JSON_CONTENT_TYPE = /^\s*application\/json\s*(;|$)/i;

export function isJsonRpcPath(url: string): boolean {
  const path = url.split('?')[0];
  return path === '/a2a' || path.startsWith('/a2a/');
}

/** The dialect errors are rendered in before a call's own dialect is known: the version header's. */
export function preliminaryDialect(headers: Record<string, string | string[] | undefined>): Dialect {
  try {
    return negotiateVersion(headers['a2a-version']) === '1.0' ? { kind: 'a2a', version: '1.0' } : { kind: 'agentrelay' };
  } catch {
    return { kind: 'agentrelay' };
  }
}

export function sendJsonRpcError(reply: FastifyReply, headers: FastifyRequest['headers'], error: RelayError, id: string | number | null = null): void {
  const rendered = renderRelayError(error, preliminaryDialect(headers));
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

/**
 * HTTP plumbing of the JSON-RPC endpoints, installed on the Fastify instance before it listens:
 * - a body over `bodyLimit` (1 MiB at most) on `/a2a…` is answered 413 with a JSON-RPC error body (declared length or not);
 * - `application/json` bodies are parsed here, and on `/a2a…` unparseable JSON reaches the
 *   controller as an `UnparseableJson` (answered -32700) instead of Fastify's 400.
 */
export function configureJsonRpcHttp(app: NestFastifyApplication, bodyLimit = JSON_RPC_MAX_BODY_BYTES): void {
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('preParsing', async (request, reply, payload) => {
    if (request.method !== 'POST' || !isJsonRpcPath(request.url)) return payload;
    const contentType = request.headers['content-type'] ?? '';
    if (!JSON_CONTENT_TYPE.test(contentType)) {
      reply.header('connection', 'close');
      sendJsonRpcError(
        reply,
        request.headers,
        new RelayError('unsupported_media_type', `Content-Type must be application/json, not ${contentType ? `'${contentType}'` : 'missing'}`),
      );
      return payload;
    }
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > bodyLimit) {
      // The body stays unread: close the connection after answering.
      reply.header('connection', 'close');
      sendJsonRpcError(reply, request.headers, payloadTooLarge(bodyLimit));
      return payload;
    }
    const body = await readLimited(payload, bodyLimit);
    if (body === undefined) {
      reply.header('connection', 'close');
      sendJsonRpcError(reply, request.headers, payloadTooLarge(bodyLimit));
      return Readable.from([]);
    }
    const replacement = Readable.from([body]) as Readable & { receivedEncodedLength?: number };
    replacement.receivedEncodedLength = body.length;
    return replacement;
  });
  app.useBodyParser('application/json', { bodyLimit: JSON_RPC_MAX_BODY_BYTES }, (request, body, done) => {
    const text = Buffer.isBuffer(body) ? body.toString('utf8') : String(body);
    try {
      done(null, JSON.parse(text));
    } catch (error) {
      if (isJsonRpcPath(request.url)) {
        done(null, new UnparseableJson((error as Error).message));
        return;
      }
      done(new BadRequestException(`Invalid JSON body: ${(error as Error).message}`), undefined);
    }
  });
}
