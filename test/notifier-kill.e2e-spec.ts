import type { TaskEvent } from '@app/contracts';
import { eventually } from './support/eventually';
import { AgentEvents, verifyStandardWebhook, type TestAgent } from './support/notifier-helpers';
import { newTaskEvents, OutboxWriter } from './support/outbox-writer';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness } from './support/relay-harness';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const eventIdOf = (request: SinkRequest): string => (JSON.parse(request.body) as { data: TaskEvent }).data.event_id;

/**
 * The crash tests with real processes: the notifier (and the tasks service) run as separate
 * `node` processes and are killed with SIGKILL — no shutdown hook runs, leases and unacked events
 * are left behind — then the relay runs on with a fresh instance.
 */
describe('SIGKILL of the notifier and tasks service processes', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let outbox: OutboxWriter;
  let agents: AgentEvents;
  const processes: ServiceProcess[] = [];

  const pair = (label: string): ReturnType<AgentEvents['pair']> => agents.pair(label, sink);
  const newEvents = (sender: TestAgent, recipient: TestAgent, count: number): TaskEvent[] => newTaskEvents(sender.handle, recipient.handle, count);

  async function succeeded(eventIds: string[]): Promise<number> {
    const result = await outbox.db.query(`SELECT count(*)::int AS n FROM "notifier"."deliveries" WHERE event_id = ANY($1::uuid[]) AND status = 'succeeded'`, [
      eventIds,
    ]);
    return result.rows[0].n as number;
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms', RELAY_WEBHOOK_TIMEOUT_MS: '4000' },
    });
    outbox = await OutboxWriter.connect();
    agents = await AgentEvents.open(relay);
  });

  afterAll(async () => {
    for (const started of processes) await started.kill();
    await agents?.close();
    await relay?.stop();
    await outbox?.end();
    await sink?.stop();
  });

  it('loses nothing when the notifier process is killed with deliveries in flight', async () => {
    const { sender, recipient, path } = await pair('kill');
    await relay.stopService('notifier');
    const notifier = await ServiceProcess.start(relay, 'notifier');
    processes.push(notifier);
    sink.plan(path, [{ status: 200, delayMs: 8000 }]);
    const before = newEvents(sender, recipient, 8);
    await outbox.write(before);
    await eventually(() => expect(sink.to(path).length).toBe(before.length), 20000);
    await notifier.kill();

    const whileDown = newEvents(sender, recipient, 4);
    await outbox.write(whileDown);
    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0));
    sink.plan(path, [{ status: 200 }]);
    await relay.startService('notifier');

    const all = [...before, ...whileDown].map((event) => event.event_id);
    await eventually(async () => expect(await succeeded(all)).toBe(all.length), 30000);
    const requests = sink.to(path);
    expect(new Set(requests.map(eventIdOf))).toEqual(new Set(all));
    const counts = new Map<string, number>();
    for (const request of requests) counts.set(request.headers['webhook-id'] as string, (counts.get(request.headers['webhook-id'] as string) ?? 0) + 1);
    expect(counts.size).toBe(all.length);
    // The 8 requests cut off by the kill are sent again, with their webhook-id; nothing is sent a third time.
    expect([...counts.values()].filter((count) => count === 2)).toHaveLength(before.length);
    expect(Math.max(...counts.values())).toBe(2);
    for (const request of requests) expect(verifyStandardWebhook(request, recipient.webhookSecret)).toBe(true);
  }, 60000);

  it('loses nothing when the tasks service process is killed right after commits', async () => {
    const { sender, recipient, path } = await pair('tasks-kill');
    await relay.stopService('tasks');
    const tasks = await ServiceProcess.start(relay, 'tasks');
    processes.push(tasks);
    const committed = newEvents(sender, recipient, 30);
    await outbox.write(committed.slice(0, 15));
    await outbox.write(committed.slice(15));
    await tasks.kill();
    await relay.startService('tasks');

    const all = committed.map((event) => event.event_id);
    await eventually(async () => expect(await succeeded(all)).toBe(all.length), 30000);
    // Events the killed process published before it could mark them are marked by the replica that
    // takes the outbox relay over, on its next pass (they may well have been delivered already).
    await eventually(async () => expect(await outbox.unpublishedCount()).toBe(0), 45000);
    const requests = sink.to(path);
    expect(requests).toHaveLength(all.length);
    expect(new Set(requests.map(eventIdOf))).toEqual(new Set(all));
  }, 120000);
});
