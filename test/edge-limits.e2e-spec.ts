import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { Client } from 'pg';
import request from 'supertest';
import { PAYLOAD_LIMITS, requestBodyLimit, TASK_LIMITS } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { expectRpcError, rpc, type Json } from './support/json-rpc';
import { TEST_ADMIN_TOKEN, RelayHarness } from './support/relay-harness';
import { openSse, type SseStream } from './support/sse';
import { countTasksReceivedBy } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';

/**
 * One agent cannot exhaust the edge: metadata is bounded, a body too large for the relay's
 * internal messages is refused before any service sees it, open streams per agent are capped,
 * and failed logins are throttled per client address and per presented key.
 */
describe('edge limits', () => {
  let relay: RelayHarness;
  let db: Client;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  const tasksReceivedBy = (agent: RegisteredTestAgent): Promise<number> => countTasksReceivedBy(db, agent);

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    org = `limits${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  describe('metadata bounds', () => {
    /** About 564 KiB of metadata in many small keys. */
    function manyKeys(): Record<string, string> {
      const metadata: Record<string, string> = {};
      for (let index = 0; Buffer.byteLength(JSON.stringify(metadata)) < 564 * 1024; index += 1000) {
        for (let key = index; key < index + 1000; key += 1) metadata[`key_${String(key).padStart(6, '0')}`] = 'value';
      }
      return metadata;
    }

    it('answers the 564 KiB many-keys metadata -32602 naming the field, in every dialect, and creates nothing', async () => {
      const before = await tasksReceivedBy(bob);
      const metadata = manyKeys();
      const agentRelay = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'hi' }] },
        metadata,
      });
      expect(agentRelay.status).toBe(200);
      expectRpcError(agentRelay.body.error, { code: -32602, reason: 'invalid_params', field: 'metadata' });
      expect(agentRelay.body.error?.message).toContain(`more than ${TASK_LIMITS.metadataKeysPerObject} keys`);

      const v10 = await rpc(
        relay.url,
        alice.api_key,
        'SendMessage',
        { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hi' }], metadata } },
        { path: `/a2a/${bob.agent.handle}`, headers: { 'a2a-version': '1.0' } },
      );
      expectRpcError(v10.body.error, { code: -32602, field: 'message.metadata' });

      const v03 = await rpc(
        relay.url,
        alice.api_key,
        'message/send',
        { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'hi', metadata }] } },
        { path: `/a2a/${bob.agent.handle}` },
      );
      expectRpcError(v03.body.error, { code: -32602, field: 'message.parts[0].metadata' });
      expect(await tasksReceivedBy(bob)).toBe(before);
    });

    it('bounds the depth and the bytes of a message payload and of thread metadata', async () => {
      let deep: Record<string, unknown> = { leaf: true };
      for (let level = 0; level < TASK_LIMITS.metadataDepth; level += 1) deep = { nested: deep };
      const tooDeep = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'hi' }], payload: deep },
      });
      expectRpcError(tooDeep.body.error, { code: -32602, field: 'message.payload' });
      expect(tooDeep.body.error?.message).toContain(`deeper than ${TASK_LIMITS.metadataDepth} levels`);

      const tooBig = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'hi' }] },
        metadata: { notes: 'n'.repeat(TASK_LIMITS.metadataBytes) },
      });
      expectRpcError(tooBig.body.error, { code: -32602, field: 'metadata' });
      expect(tooBig.body.error?.message).toContain(`at most ${TASK_LIMITS.metadataBytes} bytes`);

      const fits = await rpc(relay.url, alice.api_key, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'hi' }], payload: { trace: { id: 't1' } } },
        metadata: { notes: 'n'.repeat(1000), tags: ['a', 'b'] },
      });
      expect(fits.body.error).toBeUndefined();
      expect(fits.body.result?.task_id).toEqual(expect.any(String));
    });
  });

  describe('request size', () => {
    /** A raw JSON-RPC body sent as it is, with its exact byte length. */
    async function postRaw(
      url: string,
      apiKey: string,
      body: string,
      headers: Record<string, string> = {},
    ): Promise<{ status: number; headers: Record<string, string>; body: Json }> {
      let call = request(url).post('/a2a').set('x-api-key', apiKey).set('content-type', 'application/json');
      for (const [name, value] of Object.entries(headers)) call = call.set(name, value);
      const response = await call.send(body);
      return { status: response.status, headers: response.headers as Record<string, string>, body: response.body as Json };
    }

    /**
     * An AgentRelay message/send to Bob whose data parts are padded so that the body is exactly
     * `bytes` long, each part within the 64 KiB bound of a data part.
     */
    function sendBodyOf(bytes: number): string {
      const partCount = Math.ceil(bytes / 60_000);
      const shell = (texts: string[]): string =>
        JSON.stringify({
          jsonrpc: '2.0',
          id: 'big',
          method: 'message/send',
          params: { recipient: bob.agent.handle, intent: 'inform', message: { role: 'user', parts: texts.map((text) => ({ type: 'data', data: { text } })) } },
        });
      const padding = bytes - Buffer.byteLength(shell(Array<string>(partCount).fill('')));
      const body = shell(Array.from({ length: partCount }, (_, index) => 'x'.repeat(Math.floor(padding / partCount) + (index < padding % partCount ? 1 : 0))));
      expect(Buffer.byteLength(body)).toBe(bytes);
      return body;
    }

    /** The body limit this edge applies: the NATS server's max_payload less the internal envelope, 1 MiB at most. */
    function bodyLimit(): number {
      return requestBodyLimit(relay.edge.get(NatsRpcClient).maxPayloadBytes);
    }

    it('answers 413 to a ~1,000,000-byte and a 1,048,575-byte body when NATS cannot carry them, before any service is asked', async () => {
      const limit = bodyLimit();
      expect(limit).toBeLessThanOrEqual(PAYLOAD_LIMITS.requestBodyBytes);
      for (const bytes of [1_000_000, 1_048_575, limit + 1]) {
        const before = await tasksReceivedBy(bob);
        const response = await postRaw(relay.url, alice.api_key, sendBodyOf(bytes));
        if (bytes > limit) {
          expect({ bytes, status: response.status }).toEqual({ bytes, status: 413 });
          expectRpcError(response.body.error, { code: -32600, reason: 'payload_too_large' });
          expect(response.body.error?.data).toMatchObject({ limit_bytes: limit });
          expect(await tasksReceivedBy(bob)).toBe(before);
        } else {
          // A NATS server configured above the largest internal message carries the whole 1 MiB body.
          expect({ bytes, status: response.status, error: response.body.error }).toEqual({ bytes, status: 200, error: undefined });
          expect(await tasksReceivedBy(bob)).toBe(before + 1);
        }
      }
    });

    it('answers a send that fits the limit with its task, created once', async () => {
      const before = await tasksReceivedBy(bob);
      const response = await postRaw(relay.url, alice.api_key, sendBodyOf(bodyLimit() - 1000));
      expect(response.status).toBe(200);
      expect(response.body.error).toBeUndefined();
      expect(response.body.result).toMatchObject({ task_id: expect.any(String), status: { state: 'pending' } });
      expect(await tasksReceivedBy(bob)).toBe(before + 1);
    });

    it('answers 413 to an A2A send whose Task a reply could not carry, and the Task to one that fits', async () => {
      const textPart = { kind: 'text', text: 't'.repeat(TASK_LIMITS.textPartChars) };
      const send = (parts: unknown[]): Promise<request.Response> =>
        request(relay.url)
          .post(`/a2a/${bob.agent.handle}`)
          .set('x-api-key', alice.api_key)
          .set('content-type', 'application/json')
          .send(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 'big',
              method: 'message/send',
              params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts }, configuration: { blocking: false } },
            }),
          );
      const before = await tasksReceivedBy(bob);

      const replyLimit = relay.edge.get(NatsRpcClient).maxPayloadBytes - PAYLOAD_LIMITS.internalEnvelopeBytes;
      // Within the body limit, but its first text comes back twice more (message body, task summary).
      const tooLarge = Array.from({ length: Math.floor((bodyLimit() - 2000) / (TASK_LIMITS.textPartChars + 30)) }, () => textPart);
      if (tooLarge.length * TASK_LIMITS.textPartChars + 2 * TASK_LIMITS.textPartChars > replyLimit) {
        const refused = await send(tooLarge);
        expect({ status: refused.status, code: refused.body.error?.code }).toEqual({ status: 413, code: -32600 });
        expect(refused.body.error.data).toMatchObject({ reason: 'payload_too_large', field: 'message' });
        expect(await tasksReceivedBy(bob)).toBe(before);
      }

      const fitting = Array.from(
        { length: Math.floor((replyLimit - 2 * TASK_LIMITS.textPartChars - 2000) / (TASK_LIMITS.textPartChars + 30)) },
        () => textPart,
      );
      const accepted = await send(fitting);
      expect({ status: accepted.status, error: accepted.body.error }).toEqual({ status: 200, error: undefined });
      expect(accepted.body.result).toMatchObject({ kind: 'task', status: { state: 'submitted' } });
      expect(accepted.body.result.history.at(-1).parts).toHaveLength(fitting.length);
      expect(await tasksReceivedBy(bob)).toBe(before + 1);
    });
  });

  describe('streams per agent', () => {
    let edge: NestFastifyApplication;
    const open: SseStream[] = [];

    beforeAll(async () => {
      edge = await relay.startEdge({ RELAY_STREAMS_PER_AGENT: '3' });
    });

    afterAll(() => {
      for (const stream of open) stream.close();
    });

    function openStream(agent: RegisteredTestAgent, version?: string): Promise<SseStream> {
      return openSse(
        `${relay.urlOf(edge)}/a2a/${bob.agent.handle}`,
        { 'x-api-key': agent.api_key, ...(version ? { 'a2a-version': version } : {}) },
        version === '1.0'
          ? {
              jsonrpc: '2.0',
              id: 's',
              method: 'SendStreamingMessage',
              params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'watch' }] } },
            }
          : {
              jsonrpc: '2.0',
              id: 's',
              method: 'message/stream',
              params: { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'watch' }] } },
            },
      );
    }

    it('answers the stream past RELAY_STREAMS_PER_AGENT 429 in the caller dialect, sending nothing, and frees a slot when a stream closes', async () => {
      for (let index = 0; index < 3; index += 1) {
        const stream = await openStream(alice, '1.0');
        open.push(stream);
        expect(stream.status).toBe(200);
        expect((await stream.next())?.data.result.task).toMatchObject({ id: expect.any(String) });
      }
      const before = await tasksReceivedBy(bob);

      const v10 = await openStream(alice, '1.0');
      expect(v10.status).toBe(429);
      expectRpcError(v10.json?.error, { code: -32003, reason: 'rate_limited', shape: 'error-info' });
      expect(v10.json?.error.message).toContain('RELAY_STREAMS_PER_AGENT');
      const v03 = await openStream(alice);
      expect(v03.status).toBe(429);
      expectRpcError(v03.json?.error, { code: -32003, reason: 'rate_limited', shape: 'data' });
      expect(await tasksReceivedBy(bob)).toBe(before);

      // Another agent has slots of its own.
      const carols = await openStream(carol, '1.0');
      open.push(carols);
      expect(carols.status).toBe(200);

      open.shift()?.close();
      const reopened = await eventually(async () => {
        const stream = await openStream(alice, '1.0');
        expect(stream.status).toBe(200);
        return stream;
      }, 30000);
      open.push(reopened);
      expect((await reopened.next())?.data.result.task).toMatchObject({ id: expect.any(String) });
    });
  });

  describe('failed authentication', () => {
    const failures = 5;

    function wrongKey(): string {
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
      return `ah_live_${Array.from({ length: 32 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('')}`;
    }

    /** A JSON-RPC call from a chosen loopback address (127.0.0.x), so that client addresses differ. */
    function callFrom(url: string, localAddress: string, apiKey: string): Promise<{ status: number; retryAfter?: string; body: Json }> {
      return new Promise((resolve, reject) => {
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
        const call = http.request(
          `${url}/a2a`,
          { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'x-api-key': apiKey } },
          (response) => {
            let text = '';
            response.setEncoding('utf8');
            response.on('data', (chunk: string) => (text += chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined, body: JSON.parse(text) as Json }),
            );
          },
        );
        call.on('error', reject);
        call.end(body);
      });
    }

    it('answers 429 with Retry-After to an address past its failed agent keys, while a known agent goes on', async () => {
      const edge = await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(failures) });
      const url = relay.urlOf(edge);
      expect((await rpc(url, alice.api_key, 'tasks/list', {})).status).toBe(200);
      for (let attempt = 0; attempt < failures; attempt += 1) {
        expect((await rpc(url, wrongKey(), 'tasks/list', {})).status).toBe(401);
      }
      const throttled = await rpc(url, wrongKey(), 'tasks/list', {});
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
      expectRpcError(throttled.body.error, { code: -32003, reason: 'rate_limited' });
      expect(throttled.body.error?.message).toContain('failed authentication');

      // The agent this edge accepted before keeps working from that address, unslowed by the failures.
      const known = await rpc(url, alice.api_key, 'tasks/list', {});
      expect(known.status).toBe(200);
      expect(known.body.result).toMatchObject({ items: expect.any(Array) });
    });

    it('answers 429 to one wrong key that failed from several addresses, on any address', async () => {
      const edge = await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(failures) });
      const url = relay.urlOf(edge);
      const guessed = wrongKey();
      for (let attempt = 0; attempt < failures; attempt += 1) {
        expect((await callFrom(url, `127.0.0.${10 + attempt}`, guessed)).status).toBe(401);
      }
      const throttled = await callFrom(url, '127.0.0.40', guessed);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
      // Another key from a fresh address is still checked, even one that shares the guessed key's prefix.
      expect((await callFrom(url, '127.0.0.41', wrongKey())).status).toBe(401);
      expect((await callFrom(url, '127.0.0.42', `${guessed.slice(0, 16)}${wrongKey().slice(16)}`)).status).toBe(401);
    });

    it('answers 429 with Retry-After to admin-token guesses, before the directory is asked', async () => {
      const edge = await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(failures) });
      const url = relay.urlOf(edge);
      expect((await request(url).get('/admin/agents').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)).status).toBe(200);
      for (let attempt = 0; attempt < failures; attempt += 1) {
        const guess = await request(url).get('/admin/agents').set('authorization', `Bearer guess-${attempt}-${randomUUID()}`);
        expect(guess.status).toBe(401);
      }
      const throttled = await request(url).get('/admin/agents').set('authorization', `Bearer guess-${randomUUID()}`);
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
      expect(throttled.body.error).toMatchObject({ reason: 'rate_limited' });
      // The admin token this edge accepted before still works from that address.
      expect((await request(url).get('/admin/agents').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)).status).toBe(200);

      // Agent-key guesses from the same address are refused without asking the directory: with the directory stopped they still get 429, not 503.
      await relay.stopService('directory');
      const withoutDirectory = await rpc(url, wrongKey(), 'tasks/list', {});
      expect(withoutDirectory.status).toBe(429);
    });
  });
});
