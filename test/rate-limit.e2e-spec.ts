import { jetstreamManager } from '@nats-io/jetstream';
import { NatsRpcClient } from '@app/messaging';
import { HttpMetrics } from '@app/metrics';
import { EdgeConfig } from '../apps/edge/src/edge.config';
import { rateLimitStreamName } from '@app/messaging';
import { RateLimiter, rateLimitSubject } from '../apps/edge/src/rate-limit/rate-limiter';
import { eventually } from './support/eventually';
import { PrivateNatsServer } from './support/private-nats';
import request from 'supertest';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { registerAgent, uniqueHandle } from './support/agents';
import { rpc, type RpcResponse } from './support/json-rpc';

const LIMIT = 5;

describe('rate limiting on POST /a2a, shared by two edges', () => {
  let relay: RelayHarness;
  let secondEdgeUrl: string;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_RATE_LIMIT_PER_MINUTE: String(LIMIT) } });
    secondEdgeUrl = relay.urlOf(await relay.startEdge());
  });

  afterAll(async () => {
    await relay.stop();
  });

  /** Calls alternately on both edges; retried once when the calls straddle a minute boundary. */
  async function burst(calls: number): Promise<{ responses: RpcResponse[]; other: string }> {
    for (let attempt = 0; ; attempt++) {
      const caller = await registerAgent(relay, { handle: uniqueHandle('busy', 'acme'), name: 'Busy' });
      const window = Math.floor(Date.now() / 60_000);
      const responses: RpcResponse[] = [];
      for (let index = 0; index < calls; index++) {
        const url = index % 2 === 0 ? relay.url : secondEdgeUrl;
        responses.push(await rpc(url, caller.api_key, 'tasks/list', { filter: { role: 'recipient' } }, { id: index }));
      }
      if (Math.floor(Date.now() / 60_000) === window || attempt === 1) return { responses, other: caller.api_key };
    }
  }

  it('lets the limit through across both edges, then answers 429 + Retry-After + -32003', async () => {
    const { responses } = await burst(LIMIT + 3);
    const statuses = responses.map((response) => response.status);
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429, 429, 429]);
    const limited = responses[LIMIT];
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.body).toMatchObject({ jsonrpc: '2.0', id: LIMIT, error: { code: -32003, data: { reason: 'rate_limited' } } });
    expect(responses[0].headers['x-ratelimit-limit']).toBe(String(LIMIT));
  });

  it('counts each agent on its own', async () => {
    await burst(LIMIT + 1);
    const fresh = await registerAgent(relay, { handle: uniqueHandle('calm', 'acme'), name: 'Calm' });
    const response = await rpc(secondEdgeUrl, fresh.api_key, 'tasks/list', {});
    expect(response.status).toBe(200);
  });

  it('never lets concurrent calls on two edges past the limit', async () => {
    const caller = await registerAgent(relay, { handle: uniqueHandle('rush', 'acme'), name: 'Rush' });
    const window = Math.floor(Date.now() / 60_000);
    const responses = await Promise.all(
      Array.from({ length: 16 }, (_, index) => rpc(index % 2 === 0 ? relay.url : secondEdgeUrl, caller.api_key, 'tasks/list', {}, { id: index })),
    );
    if (Math.floor(Date.now() / 60_000) !== window) return;
    expect(responses.filter((response) => response.status === 200)).toHaveLength(LIMIT);
    expect(responses.filter((response) => response.status === 429)).toHaveLength(16 - LIMIT);
  });

  it('answers a key’s later calls of its window before reading them (both bindings), as its first refusal, one per 100 ms; bad input still gets its own error; a disabled agent is refused as such', async () => {
    const caller = await registerAgent(relay, { handle: uniqueHandle('again', 'acme'), name: 'Again' });
    const call = (id: string | number, headers: Record<string, string> = {}): Promise<RpcResponse> =>
      rpc(relay.url, caller.api_key, 'tasks/list', { filter: {} }, { id, headers });
    let first: RpcResponse | undefined;
    for (let index = 0; index < 2 * LIMIT + 2 && !first; index++) {
      const response = await call(index);
      if (response.status === 429) first = response;
    }
    expect(first).toBeDefined();
    const window = Math.floor(Date.now() / 60_000);
    const later = await call('later');
    const v1 = await call('later-v1', { 'a2a-version': '1.0' });
    const badInput = await rpc(relay.url, caller.api_key, 'tasks/list', 'not an object', { id: 'bad' });
    const rest = await request(relay.url).get(`/a2a/${caller.agent.handle}/tasks`).set({ 'x-api-key': caller.api_key });
    const restV03 = await request(relay.url)
      .get(`/a2a/${caller.agent.handle}/v1/tasks/${'0'.repeat(26)}`)
      .set({ 'x-api-key': caller.api_key });
    const restNoRoute = await request(relay.url).get(`/a2a/${caller.agent.handle}/nowhere`).set({ 'x-api-key': caller.api_key });
    const started = performance.now();
    const paced = await Promise.all([1, 2, 3, 4, 5].map((index) => call(`paced-${index}`)));
    const pacedMs = performance.now() - started;
    if (Math.floor(Date.now() / 60_000) !== window) return;
    for (const response of [later, ...paced]) {
      expect(response.status).toBe(429);
      expect(response.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(response.body.error).toEqual({
        ...first!.body.error,
        message: expect.stringContaining(`Rate limit of ${LIMIT} requests per minute exceeded`),
        data: { ...(first!.body.error!.data as object), retry_after_seconds: Number(response.headers['retry-after']) },
      });
    }
    expect(later.body.id).toBe('later');
    expect(v1.status).toBe(429);
    expect(v1.body).toMatchObject({ id: 'later-v1', error: { code: -32003, data: [{ metadata: { relay_reason: 'rate_limited', limit: String(LIMIT) } }] } });
    expect(rest.status).toBe(429);
    expect(rest.headers['retry-after']).toMatch(/^[0-9]+$/);
    expect(rest.headers['x-ratelimit-limit']).toBe(String(LIMIT));
    expect(rest.body.error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });
    expect(JSON.stringify(rest.body.error.details)).toContain('rate_limited');
    expect(restV03.status).toBe(429);
    expect(restV03.body).toMatchObject({ code: -32003, data: { reason: 'rate_limited', limit: LIMIT } });
    expect(restNoRoute.status).toBe(404);
    expect(badInput.status).not.toBe(429);
    expect(badInput.body).toMatchObject({ id: 'bad', error: { code: -32600 } });
    // Five calls at once get their refusals one per 100 ms: the last one 400 ms after the first at least.
    expect(pacedMs).toBeGreaterThanOrEqual(400);
    await request(relay.url)
      .delete(`/admin/agents/${caller.agent.handle}`)
      .set({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })
      .expect(200);
    expect((await call('disabled')).status).toBe(401);
  });

  it('leases calls in batches from one count per agent and window, in a stream scoped by the subject prefix', async () => {
    const caller = await registerAgent(relay, { handle: uniqueHandle('lease', 'acme'), name: 'Lease' });
    for (let index = 0; index < 3; index++) expect((await rpc(relay.url, caller.api_key, 'tasks/list', {})).status).toBe(200);
    const jsm = await jetstreamManager(relay.edge.get(NatsRpcClient).connection);
    const stream = rateLimitStreamName(relay.subjectPrefix);
    const info = await jsm.streams.info(stream);
    expect(info.config.name).toBe(`RATELIMIT_${relay.subjectPrefix}`);
    expect(info.config.subjects).toEqual([`${relay.subjectPrefix}.relay.ratelimit.>`]);
    expect(info.config.max_msgs_per_subject).toBe(1);
    const counts = await Promise.all(
      [0, 1].map((offset) =>
        jsm.streams.getMessage(stream, { last_by_subj: rateLimitSubject(relay.subjectPrefix, caller.agent.id, Math.floor(Date.now() / 60_000) - offset) }),
      ),
    );
    // The three calls may straddle a minute: each window's count is a lease of its own.
    const leased = counts.filter((message) => message !== null).map((message) => Number(message.string()));
    expect(leased.reduce((sum, count) => sum + count, 0)).toBeGreaterThanOrEqual(3);
    for (const count of leased) expect(count).toBeLessThanOrEqual(LIMIT);
  });
  it('counts the window on one edge alone while the store cannot be made, and counts every call let through that way', async () => {
    // A single server refuses to make a store kept on three: as if JetStream were gone, for a prefix of its own.
    const nats = await NatsRpcClient.connect({
      url: relay.env().NATS_URL,
      subjectPrefix: `${relay.subjectPrefix}_alone`,
      defaultTimeoutMs: 5000,
      name: 'alone',
    });
    try {
      const config = Object.assign(new EdgeConfig(), { RELAY_RATE_LIMIT_PER_MINUTE: LIMIT, RELAY_JETSTREAM_REPLICAS: 3 });
      const limiter = new RateLimiter(nats, config, relay.edge.get(HttpMetrics));
      const now = Date.now();
      const decisions: boolean[] = [];
      for (let index = 0; index < LIMIT + 2; index++) decisions.push((await limiter.consume('alone', now)).allowed);
      expect(decisions).toEqual([...Array<boolean>(LIMIT).fill(true), false, false]);
      expect(limiter.failOpenDecisions).toBe(LIMIT);
    } finally {
      await nats.connection.close();
    }
  });
});

describe('rate limiting across a NATS restart', () => {
  let nats: PrivateNatsServer;
  let relay: RelayHarness;

  beforeAll(async () => {
    nats = await PrivateNatsServer.start();
    relay = await RelayHarness.start({ env: { NATS_URL: nats.url, RELAY_RATE_LIMIT_PER_MINUTE: '3' } });
  });

  afterAll(async () => {
    await relay?.stop().catch(() => undefined);
    await nats?.stop();
  });

  async function callsUntilRefused(apiKey: string): Promise<number[]> {
    const statuses: number[] = [];
    for (let index = 0; index < 5; index++) statuses.push((await rpc(relay.url, apiKey, 'tasks/list', {})).status);
    return statuses;
  }

  it('still limits every agent after the server lost its streams, and never lets a call through uncounted', async () => {
    const before = await registerAgent(relay, { handle: uniqueHandle('before', 'acme'), name: 'Before' });
    const window = Math.floor(Date.now() / 60_000);
    const first = await callsUntilRefused(before.api_key);

    await nats.restart();
    const after = await eventually(async () => registerAgent(relay, { handle: uniqueHandle('after', 'acme'), name: 'After' }), 60000, 250);
    const second = await callsUntilRefused(after.api_key);
    if (Math.floor(Date.now() / 60_000) !== window) return;

    expect(first).toEqual([200, 200, 200, 429, 429]);
    expect(second).toEqual([200, 200, 200, 429, 429]);
    const edgeLimiter = relay.edge.get(RateLimiter);
    expect(edgeLimiter.failOpenDecisions).toBe(0);
    const jsm = await jetstreamManager(relay.edge.get(NatsRpcClient).connection);
    const recreated = await jsm.streams.getMessage(rateLimitStreamName(relay.subjectPrefix), {
      last_by_subj: rateLimitSubject(relay.subjectPrefix, after.agent.id, window),
    });
    expect(Number(recreated?.string())).toBe(3);
  });
});
