import { AckPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { ensureEventStream, eventStreamName, keyFilterBucketName } from '@app/messaging';
import { NOTIFIER_CONSUMER } from '../apps/notifier/src/events/event-consumer.service';
import { rateLimitStreamName } from '@app/messaging';
import { registerAgent, uniqueHandle } from './support/agents';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { PrivateNatsCluster } from './support/nats-cluster';
import { RelayHarness, type ServiceName } from './support/relay-harness';
import { createTask } from './support/tasks';

const SERVICES: ServiceName[] = ['directory', 'tasks', 'notifier'];

/** A relay on `natsUrl`, started in steps so that the test knows its subject prefix first. */
function relayOn(natsUrl: string, env: Record<string, string> = {}): RelayHarness {
  return new RelayHarness({ env: { NATS_URL: natsUrl, ...env } });
}

async function startAll(relay: RelayHarness): Promise<void> {
  for (const service of SERVICES) await relay.startService(service);
  await relay.startEdge();
}

/** A handoff created through the edge, then read back through it. */
async function createAndGet(relay: RelayHarness): Promise<void> {
  const alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
  const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
  const taskId = await createTask(relay.url, alice, bob, 'reach a cluster');
  const task = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
  expect(task).toMatchObject({ task_id: taskId, recipient_id: bob.agent.id, summary: 'reach a cluster' });
}

/** Replicas of a stream or consumer as JetStream reports them: the leader and its followers. */
function replicaCount(info: { cluster?: { leader?: string; replicas?: unknown[] } }): number {
  return (info.cluster?.leader ? 1 : 0) + (info.cluster?.replicas?.length ?? 0);
}

describe('NATS as a three-node cluster', () => {
  let cluster: PrivateNatsCluster;
  let connection: NatsConnection;
  let jsm: JetStreamManager;
  const relays: RelayHarness[] = [];

  beforeAll(async () => {
    cluster = await PrivateNatsCluster.start(3);
    connection = await connect({ servers: cluster.urls, name: 'test-cluster-observer' });
    jsm = await jetstreamManager(connection, { timeout: 10_000 });
  }, 120_000);

  afterAll(async () => {
    for (const relay of relays) await relay.stop().catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await cluster?.stop();
  }, 120_000);

  it('with RELAY_JETSTREAM_REPLICAS=3 raises an existing 1-replica event stream to 3, with its consumer, and makes the edge stream 3', async () => {
    const relay = relayOn(cluster.urls.join(','), { RELAY_JETSTREAM_REPLICAS: '3' });
    relays.push(relay);
    const stream = eventStreamName(relay.subjectPrefix);
    const before = await ensureEventStream(jsm, relay.subjectPrefix, 1);
    expect(before.config.num_replicas).toBe(1);
    // The notifier's durable consumer as an older relay made it: no replica count of its own.
    await jsm.consumers.add(stream, { durable_name: NOTIFIER_CONSUMER, ack_policy: AckPolicy.Explicit });
    expect(replicaCount(await jsm.consumers.info(stream, NOTIFIER_CONSUMER))).toBe(1);

    await startAll(relay);

    const raised = await jsm.streams.info(stream);
    expect(raised.config.num_replicas).toBe(3);
    await eventually(
      async () => {
        expect(replicaCount(await jsm.streams.info(stream))).toBe(3);
        expect(replicaCount(await jsm.consumers.info(stream, NOTIFIER_CONSUMER))).toBe(3);
      },
      60_000,
      250,
    );
    await createAndGet(relay);
    // The edge's rate-limit counters, created at its first call, on three servers too.
    const rateLimit = await jsm.streams.info(rateLimitStreamName(relay.subjectPrefix));
    expect(rateLimit.config.num_replicas).toBe(3);
    // The directory's key filter bucket, made as it starts.
    await eventually(async () => expect((await jsm.streams.info(`KV_${keyFilterBucketName(relay.subjectPrefix)}`)).config.num_replicas).toBe(3), 60_000, 250);
  }, 180_000);

  it('refuses to start a service when the cluster cannot place the replicas asked for, naming the setting', async () => {
    const relay = relayOn(cluster.urls.join(','), { RELAY_JETSTREAM_REPLICAS: '5' });
    relays.push(relay);
    await expect(relay.startService('directory')).rejects.toThrow(/RELAY_JETSTREAM_REPLICAS=5: NATS cannot keep stream RELAY_EVENTS_\S+ on 5 servers/);
  }, 60_000);

  describe('with one node down', () => {
    beforeAll(async () => {
      await cluster.stopNode(0);
      await cluster.waitForJetStream();
    }, 120_000);

    it('starts and serves a create and a get when the first server listed is the one down', async () => {
      const relay = relayOn(cluster.urls.join(','));
      relays.push(relay);
      await startAll(relay);
      await createAndGet(relay);
    }, 180_000);

    it('starts and serves a create and a get when the last server listed is the one down', async () => {
      const [down, ...up] = cluster.urls;
      const relay = relayOn([...up, down].join(' , '));
      relays.push(relay);
      await startAll(relay);
      await createAndGet(relay);
    }, 180_000);
  });
});

describe('RELAY_JETSTREAM_REPLICAS on a NATS server outside a cluster', () => {
  it('stops the start with an error naming the setting instead of waiting', async () => {
    const relay = new RelayHarness({ env: { RELAY_JETSTREAM_REPLICAS: '3' } });
    await expect(relay.startService('tasks')).rejects.toThrow(
      /RELAY_JETSTREAM_REPLICAS=3: NATS cannot keep stream \S+ on 3 servers \(replicas > 1 not supported in non-clustered mode\)/,
    );
    await relay.stop();
  }, 60_000);
});
