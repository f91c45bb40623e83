import request from 'supertest';
import { DIRECTORY_SUBJECTS } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { registerAgent, uniqueHandle } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness } from './support/relay-harness';

/** The longest an edge may act on a directory answer (RELAY_DIRECTORY_CACHE_MS at its default). */
const CACHE_BOUND_MS = 1000;

function task(recipient: string): Record<string, unknown> {
  return { jsonrpc: '2.0', id: 1, method: 'message/send', params: { recipient, message: { role: 'user', parts: [{ type: 'text', text: 'cached?' }] } } };
}

const inbox = { jsonrpc: '2.0', id: 1, method: 'tasks/list', params: { filter: { role: 'recipient' } } };

async function waitUntil(time: number): Promise<void> {
  const left = time - Date.now();
  if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
}

/**
 * Identities and trust decisions are cached by each edge. A change made behind the edges' backs
 * (straight to the directory over NATS, so no edge drops its cache itself) holds on every edge
 * within the cache bound, and the directory's change notice usually makes it hold sooner.
 */
describe('directory answers cached at the edge', () => {
  let relay: RelayHarness;
  let edges: string[];
  let directory: NatsRpcClient;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    edges = [relay.url, relay.urlOf(await relay.startEdge())];
    directory = relay.edge.get(NatsRpcClient);
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('refuses a revoked key on every edge within a second of the revocation', async () => {
    const gus = await registerAgent(relay, { handle: uniqueHandle('gus', 'cache'), name: 'Gus' });
    for (const url of edges) await request(url).post('/a2a').set('x-api-key', gus.api_key).send(inbox).expect(200);

    await directory.request(DIRECTORY_SUBJECTS.revokeKey, { handle: gus.agent.handle, prefix: gus.key.prefix });
    const revokedAt = Date.now();
    await eventually(async () => expect((await request(edges[1]).post('/a2a').set('x-api-key', gus.api_key).send(inbox)).status).toBe(401), 10000);
    await waitUntil(revokedAt + CACHE_BOUND_MS);
    for (const url of edges) await request(url).post('/a2a').set('x-api-key', gus.api_key).send(inbox).expect(401);
  });

  it('refuses a disabled agent and applies a new block on every edge within a second', async () => {
    const frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'cache'), name: 'Frank' });
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'cache'), name: 'Bob' });
    const ivy = await registerAgent(relay, { handle: uniqueHandle('ivy', 'cache'), name: 'Ivy' });
    for (const url of edges) {
      expect((await request(url).post('/a2a').set('x-api-key', bob.api_key).send(task(frank.agent.handle)).expect(200)).body.result).toBeDefined();
      await request(url).post('/a2a').set('x-api-key', ivy.api_key).send(inbox).expect(200);
    }

    await directory.request(DIRECTORY_SUBJECTS.putTrust, { handle: frank.agent.handle, allow: [], block: [bob.agent.handle] });
    await directory.request(DIRECTORY_SUBJECTS.disableAgent, { handle: ivy.agent.handle });
    const changedAt = Date.now();
    await waitUntil(changedAt + CACHE_BOUND_MS);
    for (const url of edges) {
      const blocked = await request(url).post('/a2a').set('x-api-key', bob.api_key).send(task(frank.agent.handle)).expect(200);
      expect(blocked.body.error).toMatchObject({ code: -32013, data: { reason: 'teammate_blocked', policy: 'blocked' } });
      await request(url).post('/a2a').set('x-api-key', ivy.api_key).send(inbox).expect(401);
    }
  });
});
