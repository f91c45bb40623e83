import { randomUUID } from 'node:crypto';
import type { TaskEvent } from '@app/contracts';
import { eventually } from './support/eventually';
import { AgentEvents, verifyStandardWebhook, type TestAgent } from './support/notifier-helpers';
import { newTaskEvents, OutboxWriter } from './support/outbox-writer';
import { RelayHarness } from './support/relay-harness';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const eventIdOf = (request: SinkRequest): string => (JSON.parse(request.body) as { data: TaskEvent }).data.event_id;

/** How many requests carried each webhook-id. */
function countByWebhookId(requests: SinkRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) {
    const id = request.headers['webhook-id'] as string;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

describe('notifier and tasks service crashes: nothing lost, nothing invented', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let outbox: OutboxWriter;
  let agents: AgentEvents;

  const pair = (label: string): ReturnType<AgentEvents['pair']> => agents.pair(label, sink);
  const tasks = (sender: TestAgent, recipient: TestAgent, count: number): TaskEvent[] => newTaskEvents(sender.handle, recipient.handle, count);

  async function deliveryStatuses(eventIds: string[]): Promise<Map<string, string>> {
    const result = await outbox.db.query('SELECT event_id, status FROM "notifier"."deliveries" WHERE event_id = ANY($1::uuid[])', [eventIds]);
    return new Map(result.rows.map((row: { event_id: string; status: string }) => [row.event_id, row.status]));
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms', RELAY_WEBHOOK_TIMEOUT_MS: '5000' },
    });
    outbox = await OutboxWriter.connect();
    agents = await AgentEvents.open(relay);
  });

  afterAll(async () => {
    await agents?.close();
    await relay?.stop();
    await outbox?.end();
    await sink?.stop();
  });

  it('delivers everything after the notifier is stopped with deliveries in flight and events still unread', async () => {
    const { sender, recipient, path } = await pair('inflight');
    sink.plan(path, [{ status: 200, delayMs: 8000 }]);
    const before = tasks(sender, recipient, 12);
    await outbox.write(before);
    await eventually(() => expect(sink.to(path).length).toBeGreaterThanOrEqual(2), 15000);
    await relay.stopService('notifier');
    const whileDown = tasks(sender, recipient, 5);
    await outbox.write(whileDown);
    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0));
    sink.plan(path, [{ status: 200 }]);
    await relay.startService('notifier');

    const all = [...before, ...whileDown].map((event) => event.event_id);
    await eventually(async () => {
      const statuses = await deliveryStatuses(all);
      expect(all.map((id) => statuses.get(id))).toEqual(all.map(() => 'succeeded'));
    }, 20000);
    const requests = sink.to(path);
    expect(new Set(requests.map(eventIdOf))).toEqual(new Set(all));
    // At-least-once: a request cut off by the stop is sent again, with the same webhook-id, and never more than that.
    const counts = countByWebhookId(requests);
    expect(counts.size).toBe(all.length);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
    expect([...counts.values()].filter((count) => count === 2).length).toBeGreaterThan(0);
    for (const request of requests) expect(verifyStandardWebhook(request, recipient.webhookSecret)).toBe(true);
  }, 40000);

  it('attempts again the deliveries a crashed notifier held, once their lease runs out', async () => {
    const { sender, recipient, path } = await pair('lease');
    sink.plan(path, [{ status: 200, delayMs: 8000 }]);
    const events = tasks(sender, recipient, 3);
    await outbox.write(events);
    await eventually(() => expect(sink.to(path).length).toBe(3), 15000);
    await relay.stopService('notifier');
    // What a process killed mid-request leaves behind: deliveries still leased to it.
    const ids = events.map((event) => event.event_id);
    const leased = await outbox.db.query(
      `UPDATE "notifier"."deliveries" SET locked_until = now() + interval '2 seconds' WHERE event_id = ANY($1::uuid[]) AND status IN ('pending', 'failed') RETURNING id`,
      [ids],
    );
    expect(leased.rowCount).toBe(3);
    sink.plan(path, [{ status: 200 }]);
    const restartedAt = Date.now();
    await relay.startService('notifier');
    await eventually(async () => expect([...(await deliveryStatuses(ids)).values()].filter((status) => status === 'succeeded')).toHaveLength(3), 20000);
    const retried = sink.to(path).slice(3);
    expect(retried).toHaveLength(3);
    expect(Math.min(...retried.map((request) => request.receivedAt)) - restartedAt).toBeGreaterThanOrEqual(1500);
    expect(new Set(retried.map((request) => request.headers['webhook-id']))).toEqual(
      new Set(
        sink
          .to(path)
          .slice(0, 3)
          .map((request) => request.headers['webhook-id']),
      ),
    );
  }, 40000);

  it('delivers every event committed right before the tasks service stopped, and those committed while it was down, once each', async () => {
    const { sender, recipient, path } = await pair('tasks');
    const first = tasks(sender, recipient, 10);
    await outbox.write(first);
    await relay.stopService('tasks');
    const whileDown = tasks(sender, recipient, 10);
    await outbox.write(whileDown);
    await relay.startService('tasks');
    const all = [...first, ...whileDown].map((event) => event.event_id);
    await eventually(() => expect(new Set(sink.to(path).map(eventIdOf)).size).toBe(all.length), 20000);
    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0));
    const requests = sink.to(path);
    expect(new Set(requests.map(eventIdOf))).toEqual(new Set(all));
    expect(requests).toHaveLength(all.length);
  }, 40000);

  it('shares the work between two notifier replicas without sending anything twice', async () => {
    await relay.startService('notifier');
    const { sender, recipient, path } = await pair('replicas');
    const events = tasks(sender, recipient, 20);
    await outbox.write(events);
    const all = events.map((event) => event.event_id);
    await eventually(
      async () => expect([...(await deliveryStatuses(all)).values()].filter((status) => status === 'succeeded')).toHaveLength(all.length),
      20000,
    );
    const requests = sink.to(path);
    expect(requests).toHaveLength(all.length);
    expect(new Set(requests.map(eventIdOf))).toEqual(new Set(all));
  }, 40000);

  it('removes finished deliveries older than the retention from the log when it starts, and keeps the rest', async () => {
    const insert = async (status: string, ageDays: number): Promise<string> => {
      const id = randomUUID();
      await outbox.db.query(
        `INSERT INTO "notifier"."deliveries" ("id", "event_id", "task_id", "event", "channel", "target_handle", "target_ref", "url", "destination", "content_type", "body", "status",
           "next_attempt_at", "delivered_at", "created_at", "updated_at")
         VALUES ($1, $2, 'task-old', 'a2a.task.created', 'webhook', 'old@acme', 'old@acme', 'https://hooks.example.com/old', 'hooks.example.com', 'application/json', '{}', $3::varchar,
           CASE WHEN $3::varchar = 'failed' THEN now() + interval '1 day' END, CASE WHEN $3::varchar = 'succeeded' THEN now() END,
           now() - make_interval(days => $4), now() - make_interval(days => $4))`,
        [id, randomUUID(), status, ageDays],
      );
      return id;
    };
    const oldSucceeded = await insert('succeeded', 40);
    const oldDead = await insert('dead', 40);
    const oldFailed = await insert('failed', 40);
    const recent = await insert('succeeded', 1);
    await relay.stopService('notifier');
    await relay.startService('notifier');
    const remaining = async (): Promise<string[]> =>
      (await outbox.db.query('SELECT id FROM "notifier"."deliveries" WHERE id = ANY($1::uuid[])', [[oldSucceeded, oldDead, oldFailed, recent]])).rows.map(
        (row: { id: string }) => row.id,
      );
    await eventually(async () => expect(await remaining()).toHaveLength(2));
    expect((await remaining()).sort()).toEqual([oldFailed, recent].sort());
  }, 30000);
});
