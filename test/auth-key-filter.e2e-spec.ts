import http from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Kvm } from '@nats-io/kv';
import request from 'supertest';
import { keyFilterBucketName, keyFilterDigestOfKey, openJetStream } from '@app/messaging';
import { MetricsServer } from '@app/metrics';
import { KeyFilter } from '../apps/edge/src/auth/key-filter';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { testNatsUrl } from './support/test-env';

const FAILURES = 5;
const AUTHENTICATE_SUBJECT = 'relay.directory.v1.authenticate';

function wrongKey(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  return `ah_live_${Array.from({ length: 32 }, () => alphabet[Math.floor(Math.random() * alphabet.length)]).join('')}`;
}

/** The HTTP status of a tasks/list call with `apiKey` from a chosen loopback address (127.0.0.x). */
function listStatus(url: string, apiKey: string, localAddress = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const call = http.request(
      `${url}/a2a`,
      { method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'x-api-key': apiKey } },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    call.on('error', reject);
    call.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: {} }));
  });
}

async function scrape(edge: NestFastifyApplication): Promise<PrometheusScrape> {
  const response = await fetch(`${edge.get(MetricsServer).url}/metrics`);
  expect(response.status).toBe(200);
  return PrometheusScrape.parse(await response.text());
}

/** How many authenticate requests this edge has sent the directory (every outcome). */
async function directoryLookups(edge: NestFastifyApplication): Promise<number> {
  return (await scrape(edge))
    .samples('agentrelay_nats_client_requests_total', { subject: AUTHENTICATE_SUBJECT })
    .reduce((sum, sample) => sum + sample.value, 0);
}

async function issueKey(url: string, handle: string): Promise<string> {
  const response = await request(url)
    .post(`/admin/agents/${encodeURIComponent(handle)}/keys`)
    .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
  expect(response.status).toBe(201);
  return (response.body as { api_key: string }).api_key;
}

/**
 * A valid key is never refused because someone else failed: the directory lists a digest of every
 * live key in a key-value bucket, each edge follows it, and a key it lists passes an address past
 * its failure budget to be checked by the directory, while anything else from there gets 429.
 */
describe('failed-login throttle with the key filter', () => {
  let relay: RelayHarness;
  let org: string;
  let carol: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    org = `keyfilter${Math.random().toString(36).slice(2, 7)}`;
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  async function throttledEdge(): Promise<{ edge: NestFastifyApplication; url: string }> {
    const edge = await relay.startEdge({ RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES) });
    const url = relay.urlOf(edge);
    await eventually(() => expect(edge.get(KeyFilter).isLoaded).toBe(true), 20000);
    for (let attempt = 0; attempt < FAILURES; attempt += 1) expect(await listStatus(url, wrongKey())).toBe(401);
    expect(await listStatus(url, wrongKey())).toBe(429);
    return { edge, url };
  }

  it('lets a key issued after its address passed the budget through on its first request, and answers guesses from there 429 without a lookup', async () => {
    const { edge, url } = await throttledEdge();

    // Registered through this very edge's admin API (the admin token passes the throttled address).
    const registered = await request(url)
      .post('/admin/agents')
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ handle: uniqueHandle('dave', org), name: 'Dave' });
    expect(registered.status).toBe(201);
    const lookupsBefore = await directoryLookups(edge);
    expect(await listStatus(url, (registered.body as RegisteredTestAgent).api_key)).toBe(200);
    // That call was a real directory lookup: the counter sees lookups.
    expect(await directoryLookups(edge)).toBe(lookupsBefore + 1);

    // A key issued through another edge reaches this one through the bucket.
    const otherKey = await issueKey(relay.url, carol.agent.handle);
    await eventually(() => expect(edge.get(KeyFilter).verdict(otherKey)).toBe('listed'), 20000);
    expect(await listStatus(url, otherKey)).toBe(200);

    // Guesses from the throttled address: 429, and the directory is not asked.
    const lookupsBeforeGuesses = await directoryLookups(edge);
    for (let attempt = 0; attempt < 3; attempt += 1) expect(await listStatus(url, wrongKey())).toBe(429);
    expect(await directoryLookups(edge)).toBe(lookupsBeforeGuesses);
  });

  it('refuses a revoked key from the throttled address, and drops it from the filter', async () => {
    const { edge, url } = await throttledEdge();
    const key = await issueKey(relay.url, carol.agent.handle);
    await eventually(() => expect(edge.get(KeyFilter).verdict(key)).toBe('listed'), 20000);
    expect(await listStatus(url, key)).toBe(200);

    const revoked = await request(relay.url)
      .delete(`/admin/agents/${encodeURIComponent(carol.agent.handle)}/keys/${key.slice(0, 16)}`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(revoked.status).toBe(200);
    // Refused within the edge's ≤ 1 s directory cache (the revocation notice drops it at once).
    await eventually(async () => expect(await listStatus(url, key, '127.0.0.90')).toBe(401), 20000);
    await eventually(() => expect(edge.get(KeyFilter).verdict(key)).toBe('unlisted'), 20000);
    expect([401, 429]).toContain(await listStatus(url, key));
  });

  it('unlists every key of an agent that is disabled', async () => {
    const edge = relay.edge;
    const erin = await registerAgent(relay, { handle: uniqueHandle('erin', org), name: 'Erin' });
    const second = await issueKey(relay.url, erin.agent.handle);
    await eventually(() => expect([erin.api_key, second].map((key) => edge.get(KeyFilter).verdict(key))).toEqual(['listed', 'listed']), 20000);
    const disabled = await request(relay.url)
      .delete(`/admin/agents/${encodeURIComponent(erin.agent.handle)}`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(disabled.status).toBe(200);
    await eventually(() => expect([erin.api_key, second].map((key) => edge.get(KeyFilter).verdict(key))).toEqual(['unlisted', 'unlisted']), 20000);
  });

  it('follows keys issued while the edge runs, and shows its state in its metrics', async () => {
    const edge = await relay.startEdge();
    await eventually(async () => expect((await scrape(edge)).value('agentrelay_key_filter_loaded')).toBe(1), 20000);
    const before = (await scrape(edge)).value('agentrelay_key_filter_digests');
    const key = await issueKey(relay.url, carol.agent.handle);
    await eventually(() => expect(edge.get(KeyFilter).verdict(key)).toBe('listed'), 20000);
    expect((await scrape(edge)).value('agentrelay_key_filter_digests')).toBe(before + 1);
    expect(edge.get(KeyFilter).verdict(wrongKey())).toBe('unlisted');
  });

  it('rebuilds a lost bucket from the database when a directory starts: missing digests put, stale ones removed', async () => {
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'test-key-filter-bucket' });
    try {
      const bucketName = keyFilterBucketName(relay.subjectPrefix);
      await jetStream.jsm.streams.delete(`KV_${bucketName}`);
      const kv = await new Kvm(jetStream.connection).create(bucketName, { history: 1 });
      const stale = keyFilterDigestOfKey(wrongKey());
      await kv.put(stale, '');

      await relay.startService('directory');
      const listed = async (): Promise<Set<string>> => {
        const keys = new Set<string>();
        for await (const key of await kv.keys()) keys.add(key);
        return keys;
      };
      await eventually(
        async () => {
          const keys = await listed();
          expect(keys.has(keyFilterDigestOfKey(carol.api_key))).toBe(true);
          expect(keys.has(stale)).toBe(false);
        },
        30000,
        200,
      );
    } finally {
      await jetStream.connection.drain();
    }
  });
});
