import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { KeyFilter } from '../apps/edge/src/auth/key-filter';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness } from './support/relay-harness';

/**
 * The key filter across a NATS restart that loses the JetStream store, bucket and all: the
 * directory creates the bucket again and fills it from its table, and the edge follows the new one.
 */
describe('the key filter across a NATS restart', () => {
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let grace: RegisteredTestAgent;

  beforeAll(async () => {
    nats = await PrivateNatsServer.start();
    relay = await RelayHarness.start({ env: { NATS_URL: nats.url }, services: ['directory', 'notifier'] });
    grace = await registerAgent(relay, { handle: uniqueHandle('grace', 'acme'), name: 'Grace' });
  });

  afterAll(async () => {
    await relay?.stop().catch(() => undefined);
    await nats?.stop();
  });

  it('lists the keys of before the restart again, and follows keys issued after it', async () => {
    const filter = relay.edge.get(KeyFilter);
    await eventually(() => expect(filter.verdict(grace.api_key)).toBe('listed'), 20000);

    await nats.restart();
    // The bucket is gone with the store; the directory rebuilds it from the database.
    const henry = await eventually(() => registerAgent(relay, { handle: uniqueHandle('henry', 'acme'), name: 'Henry' }), 60000, 500);
    await eventually(() => expect([grace.api_key, henry.api_key].map((key) => filter.verdict(key))).toEqual(['listed', 'listed']), 120000, 250);
  }, 240000);
});
