import { randomUUID } from 'node:crypto';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { prefixedSubject, PUSH_CONFIG_SUBJECTS } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { a2aV1, type Json } from './support/json-rpc';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl, testNatsUrl } from './support/test-env';
import { WebhookSink } from './support/webhook-sink';

/**
 * Push-config events carry no token or credentials, and each notifier replica keeps every task's
 * configs in memory. A replica that did not consume a config's event (another replica stored the
 * sealed copy) asks the tasks service for the config through its own feed, keeps it per owner and
 * config id, and sends each owner's token and credentials. Real processes; the second replica is
 * stalled with SIGSTOP while the first one consumes the config events.
 */
describe('notifier replicas: push configs learnt through the feed are delivered with their secrets', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let db: pg.Client;
  let nats: NatsConnection;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let replica: ServiceProcess | null = null;

  const v1 = (agent: RegisteredTestAgent, method: string, params: unknown, path?: string): Promise<Json> =>
    a2aV1(relay.url, agent.api_key, method, params, path);

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    nats = await connect({ servers: testNatsUrl(), name: 'test-push-config-target-spy' });
    const org = `pushrep${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    replica?.signal('SIGCONT');
    await replica?.kill();
    await nats?.drain();
    await relay?.stop();
    await db?.end();
    await sink?.stop();
  });

  it("sends each owner's token and credentials from a replica that only followed the config events", async () => {
    replica = await ServiceProcess.start(relay, 'notifier');
    // Every request for a config's secrets, whichever replica makes it (the tasks service answers them).
    const targetRequests: string[] = [];
    const spy = nats.subscribe(prefixedSubject(relay.subjectPrefix, PUSH_CONFIG_SUBJECTS.target), {
      callback: (_error, message) => {
        targetRequests.push(message.string());
      },
    });

    const sent = await v1(
      alice,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'push' }] }, configuration: { returnImmediately: true } },
      `/a2a/${bob.agent.handle}`,
    );
    const taskId = sent.result.task.id as string;

    replica.signal('SIGSTOP');
    const aliceToken = `alice-token-${randomUUID()}`;
    const bobToken = `bob-token-${randomUUID()}`;
    const set = [
      await v1(alice, 'CreateTaskPushNotificationConfig', {
        taskId,
        id: 'same',
        url: sink.url(`/${taskId}/alice`),
        token: aliceToken,
        authentication: { scheme: 'Bearer', credentials: 'alice-credentials' },
      }),
      await v1(bob, 'CreateTaskPushNotificationConfig', {
        taskId,
        id: 'same',
        url: sink.url(`/${taskId}/bob`),
        token: bobToken,
        authentication: { scheme: 'Bearer', credentials: 'bob-credentials' },
      }),
    ];
    for (const answer of set) expect(answer.error).toBeUndefined();
    // The running replica consumed both events and stored its sealed copies (a config event held by
    // the stalled replica comes back to it after the ack wait).
    await eventually(async () => (await db.query('SELECT 1 FROM "notifier"."push_targets" WHERE task_id = $1', [taskId])).rowCount === 2, 60000);
    const stored = await db.query('SELECT token, auth_credentials FROM "notifier"."push_targets" WHERE task_id = $1', [taskId]);
    for (const row of stored.rows) {
      expect(row.token).toMatch(/^v1:/);
      expect(row.auth_credentials).toMatch(/^v1:/);
    }

    // The stalled replica resumes and, through its feed, asks for both configs; then it is the only notifier.
    const requestsBefore = targetRequests.length;
    replica.signal('SIGCONT');
    await eventually(() => targetRequests.length - requestsBefore >= 2, 30000);
    await relay.stopService('notifier');
    spy.unsubscribe();

    expect((await v1(alice, 'CancelTask', { id: taskId })).error).toBeUndefined();
    await eventually(() => sink.to(`/${taskId}/alice`).length >= 1 && sink.to(`/${taskId}/bob`).length >= 1, 30000);
    const [toAlice] = sink.to(`/${taskId}/alice`);
    const [toBob] = sink.to(`/${taskId}/bob`);
    expect(toAlice.headers['x-a2a-notification-token']).toBe(aliceToken);
    expect(toAlice.headers.authorization).toBe('Bearer alice-credentials');
    expect(toBob.headers['x-a2a-notification-token']).toBe(bobToken);
    expect(toBob.headers.authorization).toBe('Bearer bob-credentials');
  }, 180000);
});
