import pg from 'pg';
import { eventStreamName, openJetStream, type JetStreamContext } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { EventCollector } from './support/event-collector';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';
import { createTask, textMessage } from './support/tasks';
import { testDatabaseUrl, testNatsUrl } from './support/test-env';

/**
 * The outbox's sweep runs once a minute here and takes only events older than a minute: an event
 * that reaches the stream within the test's deadline was published by the process that committed
 * it, right after the commit (docs/decisions/0036-publish-after-commit-outbox-as-safety-net.md).
 */
const SLOW_SWEEP = { RELAY_OUTBOX_POLL_MS: '60000', RELAY_OUTBOX_SETTLE_MS: '60000' };

async function startAgents(relay: RelayHarness): Promise<[RegisteredTestAgent, RegisteredTestAgent]> {
  return [
    await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' }),
    await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' }),
  ];
}

async function outboxRowsOf(db: pg.Client, taskId: string): Promise<Array<{ type: string; attempts: number; published: boolean; last_error: string | null }>> {
  const { rows } = await db.query(
    `SELECT "type", "attempts", "published_at" IS NOT NULL AS "published", "last_error" FROM "tasks"."outbox_events" WHERE "task_id" = $1 ORDER BY "position"`,
    [taskId],
  );
  return rows as Array<{ type: string; attempts: number; published: boolean; last_error: string | null }>;
}

describe('task events leave the tasks service right after the commit', () => {
  let relay: RelayHarness;
  let collector: EventCollector;
  let outbox: OutboxWriter;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: SLOW_SWEEP });
    outbox = await OutboxWriter.connect();
    [bob, frank] = await startAgents(relay);
    // The tasks service made the stream at its start; its first sweep is behind it.
    collector = await EventCollector.start(relay.subjectPrefix);
  });

  afterAll(async () => {
    await collector?.stop();
    await relay?.stop();
    await outbox?.end();
  });

  it('publishes a handoff’s events in order without the sweep, and marks them published once', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Please rotate the staging keys.');
    await eventually(() => expect(collector.ofTask(taskId).map((collected) => collected.event.type)).toEqual(['created']), 15000);
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: textMessage('Rotating now.') });
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Rotated.' });

    await eventually(() => expect(collector.ofTask(taskId)).toHaveLength(4), 15000);
    expect(collector.ofTask(taskId).map((collected) => collected.event.type)).toEqual(['created', 'accepted', 'message_appended', 'completed']);
    for (const collected of collector.ofTask(taskId)) expect(collected.msgId).toBe(collected.event.event_id);
    await eventually(async () => expect((await outboxRowsOf(outbox.db, taskId)).every((row) => row.published)).toBe(true), 15000);
    expect((await outboxRowsOf(outbox.db, taskId)).map((row) => row.attempts)).toEqual([1, 1, 1, 1]);
  }, 60000);

  it('publishes an earlier event of the task that its writer never published before the change’s own', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Please review the migration.');
    await eventually(() => expect(collector.ofTask(taskId)).toHaveLength(1), 15000);
    // A commit whose process died before its publish: only in the outbox, and the sweep is a minute away.
    const orphan = taskEvent(taskId, 'message_appended', { sender: bob.agent.handle, recipient: frank.agent.handle, sequenceNo: 2 });
    await outbox.write([orphan]);
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });

    await eventually(() => expect(collector.ofTask(taskId)).toHaveLength(3), 15000);
    const life = collector.ofTask(taskId).map((collected) => collected.event);
    expect(life.map((event) => event.type)).toEqual(['created', 'message_appended', 'accepted']);
    expect(life[1].event_id).toBe(orphan.event_id);
  }, 60000);
});

describe('the outbox sweep publishes what a publish after the commit missed', () => {
  let relay: RelayHarness;
  let outbox: OutboxWriter;
  let jetStream: JetStreamContext;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: SLOW_SWEEP });
    outbox = await OutboxWriter.connect();
    jetStream = await openJetStream({ url: testNatsUrl(), name: 'events-after-commit-test' });
    [bob, frank] = await startAgents(relay);
  });

  afterAll(async () => {
    await relay?.stop();
    await outbox?.end();
    await jetStream?.connection.drain();
  });

  it('takes an event whose publish failed at once, not a minute later, and keeps its task in order', async () => {
    // Publishes fail while the stream is gone; the sweep makes it again. Nothing else may make it first: the tasks service
    // has published (and so checked the stream) already, the notifier is stopped, and the directory has published its agents' events.
    const earlier = await createTask(relay.url, bob, frank, 'Please read the runbook.');
    await eventually(async () => expect((await outboxRowsOf(outbox.db, earlier)).map((row) => row.published)).toEqual([true]), 15000);
    await relay.stopService('notifier');
    await eventually(async () => {
      const { rows } = await outbox.db.query(`SELECT count(*)::int AS "unpublished" FROM "directory"."outbox_events" WHERE "published_at" IS NULL`);
      expect(rows[0]).toEqual({ unpublished: 0 });
    });
    await jetStream.jsm.streams.delete(eventStreamName(relay.subjectPrefix));
    const taskId = await createTask(relay.url, bob, frank, 'Please check the backups.');
    await eventually(async () => expect((await outboxRowsOf(outbox.db, taskId)).map((row) => row.published)).toEqual([true]), 15000);
    const [created] = await outboxRowsOf(outbox.db, taskId);
    // One failed publish after the commit, one by the sweep.
    expect(created.attempts).toBe(2);
    expect(created.last_error).toBeNull();
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });

    const collector = await EventCollector.start(relay.subjectPrefix);
    try {
      await eventually(() => expect(collector.ofTask(taskId).map((collected) => collected.event.type)).toEqual(['created', 'accepted']), 15000);
    } finally {
      await collector.stop();
    }
    const db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    try {
      expect((await outboxRowsOf(db, taskId)).map((row) => row.type)).toEqual(['created', 'accepted']);
    } finally {
      await db.end();
    }
  }, 60000);
});
