import { randomUUID } from 'node:crypto';
import { type TaskEvent, type TaskEventType } from '@app/contracts';
import { eventStreamName, openJetStream, type JetStreamContext } from '@app/messaging';
import { eventually } from './support/eventually';
import { OutboxWriter, taskEvent } from './support/outbox-writer';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness } from './support/relay-harness';

/**
 * The outbox relay publishes many events at once; a NATS server killed under it, with publishes
 * in flight, must leave the stream with every event exactly once and each task's in outbox order.
 */
describe('the outbox relay when NATS dies mid-batch', () => {
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let outbox: OutboxWriter;

  beforeAll(async () => {
    nats = await PrivateNatsServer.start();
    relay = await RelayHarness.start({ services: ['tasks'], env: { NATS_URL: nats.url } });
    outbox = await OutboxWriter.connect();
  });

  afterAll(async () => {
    await relay?.stop().catch(() => undefined);
    await outbox?.end();
    await nats?.stop();
  });

  /** The stream's task events, oldest first. */
  async function streamed(jetStream: JetStreamContext): Promise<TaskEvent[]> {
    const name = eventStreamName(relay.subjectPrefix);
    const { state } = await jetStream.jsm.streams.info(name);
    const events: TaskEvent[] = [];
    for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
      const message = await jetStream.jsm.streams.getMessage(name, { seq });
      if (message) events.push(message.json<TaskEvent>());
    }
    return events;
  }

  it('keeps every event once and each task in order across the kill', async () => {
    const tasks = Array.from({ length: 40 }, () => `task-${randomUUID()}`);
    const types: TaskEventType[] = ['created', 'accepted', 'message_appended', 'message_appended', 'artifact_updated', 'message_appended', 'completed'];
    const written = new Map<string, string[]>(tasks.map((task) => [task, []]));
    const writeStep = async (type: TaskEventType): Promise<void> => {
      const events = tasks.map((task) => taskEvent(task, type));
      await outbox.write(events);
      for (const event of events) written.get(event.task_id)!.push(event.event_id);
    };

    // A stream to publish into, and the relay publishing when NATS goes away.
    await writeStep(types[0]);
    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0), 30000);
    await writeStep(types[1]);
    await writeStep(types[2]);
    await nats.restartKeepingStore();
    for (const type of types.slice(3, 5)) await writeStep(type);
    // Down for longer than a publish waits for its acknowledgement: publishes fail, and are retried.
    const down = nats.restartKeepingStore(7000);
    for (const type of types.slice(5)) await writeStep(type);
    await down;

    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0), 90000, 250);
    const { rows } = await outbox.db.query('SELECT count(*)::int AS "retried" FROM "tasks"."outbox_events" WHERE task_id = ANY($1) AND attempts > 1', [tasks]);
    expect(rows[0].retried).toBeGreaterThan(0);
    const jetStream = await openJetStream({ url: nats.url, name: 'outbox-fault-test' });
    try {
      const events = await streamed(jetStream);
      expect(new Set(events.map((event) => event.event_id)).size).toBe(events.length);
      for (const task of tasks) expect(events.filter((event) => event.task_id === task).map((event) => event.event_id)).toEqual(written.get(task));
    } finally {
      await jetStream.connection.drain();
    }
  }, 180000);
});
