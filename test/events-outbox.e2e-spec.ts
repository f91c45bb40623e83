import { randomUUID } from 'node:crypto';
import { prefixedSubject, taskEventSubject, type TaskEvent, type TaskEventType } from '@app/contracts';
import { ensureEventStream, eventStreamName, openJetStream, publishWithMsgId, type JetStreamContext } from '@app/messaging';
import { EventCollector } from './support/event-collector';
import { eventually } from './support/eventually';
import { OutboxWriter, taskEvent as makeTaskEvent } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';
import { testNatsUrl } from './support/test-env';

function taskEvent(taskId: string, type: TaskEventType, sequenceNo: number | null = null): TaskEvent {
  return makeTaskEvent(taskId, type, { sequenceNo });
}

describe('task events: the outbox relay publishes to JetStream', () => {
  let relay: RelayHarness;
  let outbox: OutboxWriter;
  let collector: EventCollector;
  let jetStream: JetStreamContext;

  const writeOutbox = (events: TaskEvent[]): Promise<void> => outbox.write(events);
  const unpublishedCount = (): Promise<number> => outbox.unpublishedCount();

  beforeAll(async () => {
    relay = await RelayHarness.start({ services: ['tasks'] });
    outbox = await OutboxWriter.connect();
    jetStream = await openJetStream({ url: testNatsUrl(), name: 'events-test' });
    await ensureEventStream(jetStream.jsm, relay.subjectPrefix);
    collector = await EventCollector.start(relay.subjectPrefix);
  });

  afterAll(async () => {
    await collector?.stop();
    await relay?.stop();
    await outbox?.end();
    await jetStream?.connection.drain();
  });

  it('creates a file-backed stream of its own per subject prefix', async () => {
    const info = await jetStream.jsm.streams.info(eventStreamName(relay.subjectPrefix));
    expect(info.config.storage).toBe('file');
    expect(info.config.subjects).toEqual([`${relay.subjectPrefix}.relay.events.>`]);
  });

  it('publishes each outbox row once, on relay.events.task.<type>, with Nats-Msg-Id = event id, in task order', async () => {
    const first = `task-${randomUUID()}`;
    const second = `task-${randomUUID()}`;
    const life: TaskEvent[] = [
      taskEvent(first, 'created', 1),
      taskEvent(second, 'created', 1),
      taskEvent(first, 'accepted'),
      taskEvent(first, 'message_appended', 2),
      taskEvent(second, 'rejected'),
      taskEvent(first, 'input_required'),
      taskEvent(first, 'completed'),
    ];
    await writeOutbox(life.slice(0, 3));
    await writeOutbox(life.slice(3));

    await eventually(() => expect({ first: collector.ofTask(first).length, second: collector.ofTask(second).length }).toEqual({ first: 5, second: 2 }));
    const seen = collector.ofTask(first);
    expect(seen.map((collected) => collected.event.type)).toEqual(['created', 'accepted', 'message_appended', 'input_required', 'completed']);
    for (const collected of [...seen, ...collector.ofTask(second)]) {
      expect(collected.subject).toBe(prefixedSubject(relay.subjectPrefix, taskEventSubject(collected.event.type)));
      expect(collected.msgId).toBe(collected.event.event_id);
    }
    await eventually(async () => expect(await unpublishedCount()).toBe(0));
    const rows = await outbox.db.query('SELECT attempts, published_at FROM "tasks"."outbox_events" WHERE task_id = $1', [first]);
    expect(rows.rows.every((row: { attempts: number; published_at: Date | null }) => row.attempts === 1 && row.published_at !== null)).toBe(true);
  });

  it('finds a commit by itself, nothing told it of (polling)', async () => {
    const task = `task-${randomUUID()}`;
    await writeOutbox([taskEvent(task, 'created', 1)]);
    await eventually(() => expect(collector.ofTask(task).length).toBe(1), 30000);
  });

  it('lets JetStream drop a re-published event (duplicate window keyed on the event id)', async () => {
    const task = `task-${randomUUID()}`;
    const event = taskEvent(task, 'created', 1);
    await writeOutbox([event]);
    await eventually(() => expect(collector.ofTask(task).length).toBe(1), 30000);
    const ack = await publishWithMsgId(jetStream.js, prefixedSubject(relay.subjectPrefix, taskEventSubject('created')), event, event.event_id);
    expect(ack.duplicate).toBe(true);
  });

  it('shares the outbox between two replicas without double-publishing and keeps each task in order', async () => {
    await relay.startService('tasks');
    const tasks = Array.from({ length: 6 }, () => `task-${randomUUID()}`);
    const types: TaskEventType[] = ['created', 'accepted', 'message_appended', 'message_appended', 'completed'];
    const before = (await jetStream.jsm.streams.info(eventStreamName(relay.subjectPrefix))).state.messages;
    for (const type of types) {
      await writeOutbox(tasks.map((task) => taskEvent(task, type)));
    }
    await eventually(() => expect(tasks.map((task) => collector.ofTask(task).length)).toEqual(tasks.map(() => types.length)), 15000);
    for (const task of tasks) expect(collector.ofTask(task).map((collected) => collected.event.type)).toEqual(types);
    const after = (await jetStream.jsm.streams.info(eventStreamName(relay.subjectPrefix))).state.messages;
    expect(after - before).toBe(tasks.length * types.length);
    // Published marks are written in batches a moment after the publish.
    const marks = await eventually(async () => {
      const { rows } = await outbox.db.query(
        'SELECT count(*) FILTER (WHERE published_at IS NULL)::int AS unmarked, max(attempts)::int AS attempts FROM "tasks"."outbox_events" WHERE task_id = ANY($1)',
        [tasks],
      );
      expect(rows[0].unmarked).toBe(0);
      return rows[0] as { attempts: number };
    }, 15000);
    expect(marks.attempts).toBe(1);
  }, 60000);

  it('publishes in position order when positions gain a digit within one batch (9 before 10, not as text)', async () => {
    const task = `task-${randomUUID()}`;
    const life = [taskEvent(task, 'created', 1), taskEvent(task, 'accepted'), taskEvent(task, 'message_appended', 2), taskEvent(task, 'completed')];
    await relay.stopService('tasks');
    // The next positions straddle a power of ten above every position so far: two below it, two from it on.
    const { rows } = await outbox.db.query('SELECT COALESCE(max("position"), 0)::text AS "max" FROM "tasks"."outbox_events"');
    let boundary = 10n;
    while (boundary - 2n <= BigInt(rows[0].max as string)) boundary *= 10n;
    await outbox.db.query(`SELECT setval('"tasks"."outbox_events_position_seq"', $1::bigint)`, [(boundary - 3n).toString()]);
    await writeOutbox(life);
    await relay.startService('tasks');
    await eventually(() => expect(collector.ofTask(task).length).toBe(4));
    expect(collector.ofTask(task).map((collected) => collected.event.event_id)).toEqual(life.map((event) => event.event_id));
  }, 30000);

  it('publishes what was committed while the tasks service was down, after a restart, exactly once', async () => {
    const task = `task-${randomUUID()}`;
    const life = [taskEvent(task, 'created', 1), taskEvent(task, 'accepted'), taskEvent(task, 'completed')];
    await writeOutbox(life.slice(0, 1));
    await relay.stopService('tasks');
    await writeOutbox(life.slice(1));
    expect(await unpublishedCount()).toBeGreaterThan(0);
    await relay.startService('tasks');
    await eventually(() => expect(collector.ofTask(task).length).toBe(3));
    expect(collector.ofTask(task).map((collected) => collected.event.event_id)).toEqual(life.map((event) => event.event_id));
    await eventually(async () => expect(await unpublishedCount()).toBe(0));
  }, 30000);

  it('keeps an event whose publish failed, retries it, and re-creates a stream that disappeared', async () => {
    const task = `task-${randomUUID()}`;
    const life = [taskEvent(task, 'created', 1), taskEvent(task, 'accepted')];
    await jetStream.jsm.streams.delete(eventStreamName(relay.subjectPrefix));
    await writeOutbox(life);
    await eventually(async () => expect(await unpublishedCount()).toBe(0), 15000);
    const rows = await outbox.db.query('SELECT id, attempts, last_error FROM "tasks"."outbox_events" WHERE task_id = $1 ORDER BY position', [task]);
    expect(rows.rows[0].attempts).toBeGreaterThanOrEqual(2);
    expect(rows.rows[0].last_error).toBeNull();
    const fresh = await EventCollector.start(relay.subjectPrefix);
    try {
      await eventually(() => expect(fresh.ofTask(task).length).toBe(2));
      expect(fresh.ofTask(task).map((collected) => collected.event.event_id)).toEqual(life.map((event) => event.event_id));
    } finally {
      await fresh.stop();
    }
  }, 30000);
});
