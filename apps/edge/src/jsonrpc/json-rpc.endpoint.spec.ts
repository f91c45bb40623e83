import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Registry } from 'prom-client';
import { loadConfig } from '@app/config';
import { RelayError } from '@app/contracts';
import { HttpMetrics } from '@app/metrics';
import type { AgentAuthenticator } from '../auth/agent-authenticator';
import { RequestMetrics } from '../metrics/request-metrics';
import { EdgeConfig } from '../edge.config';
import type { DirectoryLookups } from '../directory/directory-lookups';
import type { RateLimiter } from '../rate-limit/rate-limiter';
import { AgentCallPipeline } from '../endpoint/agent-call';
import { CallerGate } from '../endpoint/caller-gate';
import { CallersAtLimit } from '../endpoint/callers-at-limit';
import { SseWriter, SSE_KEEP_ALIVE_MS } from '../endpoint/sse-writer';
import { JsonRpcEndpoint } from './json-rpc.endpoint';
import { EventStream } from '../streams/task-streams';
import type { DialectMethods } from '../methods/dialect-methods';

/** What EdgeConfig requires beside the values a test sets. */
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

/** The raw response of a hijacked reply: records what is written. */
class FakeRaw extends EventEmitter {
  status = 0;
  headers: Record<string, unknown> = {};
  written = '';
  writableEnded = false;
  destroyed = false;
  writeHead(status: number, headers: Record<string, unknown>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.written += chunk;
    return true;
  }
  end(): void {
    this.writableEnded = true;
  }
}

function fakeReply(raw: FakeRaw): FastifyReply {
  return fakeReplyFields(raw) as unknown as FastifyReply;
}

/** The fake reply as a plain object (a FastifyReply is thenable, so it is not spread itself). */
function fakeReplyFields(raw: FakeRaw) {
  const headers: Record<string, string> = {};
  const reply = {
    sent: false,
    raw,
    hijack: () => {
      reply.sent = true;
    },
    header: (name: string, value: string) => {
      headers[name] = value;
      return reply;
    },
    getHeaders: () => headers,
    code: () => reply,
    send: () => reply,
  };
  return reply;
}

function endpoint(stream: EventStream, config = loadConfig(EdgeConfig, EDGE_REQUIRED)): JsonRpcEndpoint {
  const authenticator = { authenticate: async () => ({ id: 'a1', handle: 'alice@acme', name: 'Alice', role: null }) } as unknown as AgentAuthenticator;
  const rateLimiter = { consume: async () => ({ allowed: true, limit: 60, retryAfterSeconds: 0 }) } as unknown as RateLimiter;
  const a2a: DialectMethods = { handle: async () => stream };
  const httpMetrics = new HttpMetrics(new Registry());
  const metrics = new RequestMetrics(httpMetrics);
  const lookups = { orgQuotas: async () => ({ agents: null, requests_per_minute: null }), onForget: () => undefined } as unknown as DirectoryLookups;
  return new JsonRpcEndpoint(
    new AgentCallPipeline(
      new CallerGate(authenticator, rateLimiter, lookups, httpMetrics, new CallersAtLimit(lookups)),
      new SseWriter(config, metrics),
      metrics,
    ),
    a2a,
    a2a,
  );
}

const request = {
  headers: { 'a2a-version': '1.0' },
  body: { jsonrpc: '2.0', id: 7, method: 'SendStreamingMessage', params: { message: {} } },
} as unknown as FastifyRequest;

describe('JsonRpcEndpoint streams', () => {
  it('writes each item as a data event repeating the id, and an error after the start as an error event', async () => {
    const raw = new FakeRaw();
    const stream = new EventStream(async function* () {
      yield { id: '1', event: { task: { id: 'T1' } } };
      throw new RelayError('thread_not_found', 'Task not found');
    });
    await endpoint(stream).answer(request, fakeReply(raw), 'bob@acme');
    expect(raw.status).toBe(200);
    expect(raw.headers).toMatchObject({
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'x-ratelimit-limit': '60',
    });
    const [first, second] = raw.written.split('\n\n');
    expect(first).toBe('id: 1\ndata: {"jsonrpc":"2.0","id":7,"result":{"task":{"id":"T1"}}}');
    expect(second.split('\n')[0]).toBe('event: error');
    expect(JSON.parse(second.split('\n')[1].slice('data: '.length))).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32001 } });
    expect(raw.writableEnded).toBe(true);
  });

  it('sends a keep-alive comment while idle, and stops the stream when the client goes away', async () => {
    jest.useFakeTimers();
    try {
      const raw = new FakeRaw();
      let stopped = false;
      const stream = new EventStream(async function* (signal) {
        yield { id: '1', event: { task: { id: 'T1' } } };
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        stopped = true;
      });
      const answered = endpoint(stream).answer(request, fakeReply(raw), 'bob@acme');
      await jest.advanceTimersByTimeAsync(SSE_KEEP_ALIVE_MS);
      expect(raw.written).toContain('\n\n: keep-alive\n\n');
      raw.destroyed = true;
      raw.emit('close');
      await answered;
      expect(stopped).toBe(true);
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses a stream past RELAY_STREAMS_PER_AGENT with 429, and frees the slot as soon as a stream closes', async () => {
    const stream = new EventStream(async function* (signal) {
      yield { id: '1', event: { task: { id: 'T1' } } };
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
    });
    const relay = endpoint(stream, loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_STREAMS_PER_AGENT: '2' }));
    const raws = [new FakeRaw(), new FakeRaw()];
    const answers = raws.map((raw) => relay.answer(request, fakeReply(raw), 'bob@acme'));
    const refused: { status?: number; body?: unknown } = {};
    const refusedReply = {
      ...fakeReplyFields(new FakeRaw()),
      header: () => refusedReply,
      code: (status: number) => ((refused.status = status), refusedReply),
      send: (body: unknown) => ((refused.body = body), refusedReply),
    };
    await relay.answer(request, refusedReply as unknown as FastifyReply, 'bob@acme');
    expect(refused.status).toBe(429);
    expect(JSON.stringify(refused.body)).toContain('RELAY_STREAMS_PER_AGENT');
    raws[0].destroyed = true;
    raws[0].emit('close');
    const third = new FakeRaw();
    const reopened = relay.answer(request, fakeReply(third), 'bob@acme');
    for (const raw of [raws[1], third]) {
      raw.destroyed = true;
      raw.emit('close');
    }
    await Promise.all([...answers, reopened]);
    expect(third.status).toBe(200);
  });
});
