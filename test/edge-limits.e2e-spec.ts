import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { TASK_LIMITS } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, rpc, type Json } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

/**
 * One agent cannot exhaust the edge: metadata is bounded, a body too large for the relay's
 * internal messages is refused before any service sees it, open streams per agent are capped,
 * and failed logins are throttled per client address and per key prefix.
 */
describe('edge limits', () => {
  let relay: RelayHarness;
  let db: Client;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  /** The tasks whose recipient is `agent`, straight from the tasks schema. */
  async function tasksReceivedBy(agent: RegisteredTestAgent): Promise<number> {
    const result = await db.query<{ count: string }>(`SELECT count(*) AS count FROM "tasks"."threads" WHERE "recipient_id" = $1`, [agent.agent.id]);
    return Number(result.rows[0].count);
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    org = `limits${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
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
    async function postRaw(url: string, apiKey: string, body: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, string>; body: Json }> {
      let call = request(url).post('/a2a').set('x-api-key', apiKey).set('content-type', 'application/json');
      for (const [name, value] of Object.entries(headers)) call = call.set(name, value);
      const response = await call.send(body);
      return { status: response.status, headers: response.headers as Record<string, string>, body: response.body as Json };
    }

    /** An AgentRelay message/send to Bob whose text is padded so that the body is exactly `bytes` long. */
    function sendBodyOf(bytes: number): string {
      const shell = (text: string): string =>
        JSON.stringify({ jsonrpc: '2.0', id: 'big', method: 'message/send', params: { recipient: bob.agent.handle, intent: 'inform', message: { role: 'user', parts: [{ type: 'data', data: { text } }] } } });
      const body = shell(`${'x'.repeat(bytes - Buffer.byteLength(shell('')))}`);
      expect(Buffer.byteLength(body)).toBe(bytes);
      return body;
    }

    it('answers 413 to a ~1,000,000-byte and a 1,048,575-byte body, before any service is asked', async () => {
      const before = await tasksReceivedBy(bob);
      for (const bytes of [1_000_000, 1_048_575]) {
        const response = await postRaw(relay.url, alice.api_key, sendBodyOf(bytes));
        expect({ bytes, status: response.status }).toEqual({ bytes, status: 413 });
        expectRpcError(response.body.error, { code: -32600, reason: 'payload_too_large' });
      }
      expect(await tasksReceivedBy(bob)).toBe(before);
    });

    it('answers a send that fits the limit with its task, created once', async () => {
      const before = await tasksReceivedBy(bob);
      const response = await postRaw(relay.url, alice.api_key, sendBodyOf(900_000));
      expect(response.status).toBe(200);
      expect(response.body.error).toBeUndefined();
      expect(response.body.result).toMatchObject({ task_id: expect.any(String), status: { state: 'pending' } });
      expect(await tasksReceivedBy(bob)).toBe(before + 1);
    });
  });
});
