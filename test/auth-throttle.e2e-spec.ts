import http from 'node:http';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { expectRpcError, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const FAILURES = 5;

function wrongKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return `ah_live_${Array.from({ length: 32 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('')}`;
}

interface Answer {
  status: number;
  retryAfter?: string;
  body: Json;
}

/** A tasks/list call from a chosen loopback address (127.0.0.x), with extra headers such as X-Forwarded-For. */
function listFrom(url: string, apiKey: string, options: { localAddress?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} });
    const call = http.request(
      `${url}/a2a`,
      {
        method: 'POST',
        localAddress: options.localAddress ?? '127.0.0.1',
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey, ...options.headers },
      },
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

/** Spends an address's whole failure budget with wrong keys, and checks the next wrong key is answered 429. */
async function exhaustBudget(url: string, options: { localAddress?: string; headers?: Record<string, string> } = {}): Promise<void> {
  for (let attempt = 0; attempt < FAILURES; attempt += 1) expect((await listFrom(url, wrongKey(), options)).status).toBe(401);
  const throttled = await listFrom(url, wrongKey(), options);
  expect(throttled.status).toBe(429);
  expect(Number(throttled.retryAfter)).toBeGreaterThan(0);
  expectRpcError(throttled.body.error, { code: -32003, reason: 'rate_limited' });
}

/**
 * Failed logins are throttled, never successful ones: someone else's failures, from the same
 * address or with the same key prefix, never refuse a valid key or the admin token.
 */
describe('failed-login throttle', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    const org = `throttle${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('accepts the admin token, never used on this edge, from an address past its failure budget', async () => {
    const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES) }));
    await exhaustBudget(url);
    const admin = await request(url).get('/admin/agents').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(admin.status).toBe(200);
    // Guesses from that address are still answered 429.
    expect((await request(url).get('/admin/agents').set('authorization', `Bearer guess-${randomUUID()}`)).status).toBe(429);
  });

  it('accepts a key whose public prefix others failed with from many addresses, and checks each other guess on its own', async () => {
    const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES) }));
    // Alice's display prefix (its first 16 characters) with another ending, from a new address each time.
    for (let attempt = 0; attempt <= FAILURES; attempt += 1) {
      const variant = `${alice.api_key.slice(0, 16)}${wrongKey().slice(16)}`;
      expect((await listFrom(url, variant, { localAddress: `127.0.0.${10 + attempt}` })).status).toBe(401);
    }
    const accepted = await listFrom(url, alice.api_key, { localAddress: '127.0.0.30' });
    expect(accepted.status).toBe(200);
    expect(accepted.body.result).toMatchObject({ items: expect.any(Array) });
  });

  it('answers 429 to one wrong key replayed from many addresses, without a lookup for it', async () => {
    const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES) }));
    const replayed = wrongKey();
    for (let attempt = 0; attempt < FAILURES; attempt += 1) {
      expect((await listFrom(url, replayed, { localAddress: `127.0.0.${40 + attempt}` })).status).toBe(401);
    }
    const throttled = await listFrom(url, replayed, { localAddress: '127.0.0.60' });
    expect(throttled.status).toBe(429);
    expect((await listFrom(url, wrongKey(), { localAddress: '127.0.0.61' })).status).toBe(401);
  });

  it('lets an agent this edge accepted more than a window ago pass an address past its budget', async () => {
    const windowMs = 8000;
    const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES), RELAY_AUTH_FAILURE_WINDOW_MS: String(windowMs) }));
    const acceptedAt = Date.now();
    expect((await listFrom(url, alice.api_key)).status).toBe(200);
    // The failures open their window half a window after Alice's call, and it stays open past a whole window after it.
    await eventually(() => expect(Date.now()).toBeGreaterThanOrEqual(acceptedAt + windowMs / 2), windowMs, 100);
    await exhaustBudget(url);
    await eventually(() => expect(Date.now()).toBeGreaterThan(acceptedAt + windowMs + 100), 2 * windowMs, 100);
    expect((await listFrom(url, alice.api_key)).status).toBe(200);
  });

  it('never lets an agent spend its own key on the admin API: there it is the wrong realm, counted for the address', async () => {
    const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES) }));
    for (let attempt = 0; attempt < FAILURES; attempt += 1) {
      expect((await request(url).get('/admin/agents').set('authorization', `Bearer ${bob.api_key}`)).status).toBe(401);
    }
    expect((await request(url).get('/admin/agents').set('authorization', `Bearer ${bob.api_key}`)).status).toBe(429);
    expect((await listFrom(url, bob.api_key, { localAddress: '127.0.0.80' })).status).toBe(200);
  });

  describe('behind a trusted proxy', () => {
    it('counts each client named by X-Forwarded-For on its own when the peer is in RELAY_TRUSTED_PROXIES', async () => {
      const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES), RELAY_TRUSTED_PROXIES: '127.0.0.1/32, ::1' }));
      await exhaustBudget(url, { headers: { 'x-forwarded-for': '203.0.113.7' } });
      expect((await listFrom(url, wrongKey(), { headers: { 'x-forwarded-for': '198.51.100.9' } })).status).toBe(401);
      expect((await listFrom(url, bob.api_key, { headers: { 'x-forwarded-for': '198.51.100.9' } })).status).toBe(200);
    });

    it('ignores X-Forwarded-For from a peer it does not trust, so a client cannot pick a fresh address per guess', async () => {
      const url = relay.urlOf(await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES), RELAY_TRUSTED_PROXIES: '127.0.0.1' }));
      for (let attempt = 0; attempt < FAILURES; attempt += 1) {
        expect((await listFrom(url, wrongKey(), { localAddress: '127.0.0.70', headers: { 'x-forwarded-for': `203.0.113.${attempt}` } })).status).toBe(401);
      }
      expect((await listFrom(url, wrongKey(), { localAddress: '127.0.0.70', headers: { 'x-forwarded-for': '203.0.113.99' } })).status).toBe(429);
    });
  });
});
