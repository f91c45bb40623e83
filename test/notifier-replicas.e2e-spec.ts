import pg from 'pg';
import { AGENT_UPDATED_EVENT_SUBJECT, prefixedSubject, type TaskEvent } from '@app/contracts';
import { eventStreamName, openJetStream } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl, testNatsUrl } from './support/test-env';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const taskIdOf = (request: SinkRequest): string => (JSON.parse(request.body) as { data: TaskEvent }).data.task_id;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue 10 item 1: a task event for an agent the notifier has not heard of is never acknowledged
 * without its deliveries. Real services; the notifiers are real processes, stalled with SIGSTOP.
 */
describe('notifier replicas: a task event for an agent not heard of yet is delivered, not dropped', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let db: pg.Client;
  const processes: ServiceProcess[] = [];

  async function pair(label: string): Promise<{ sender: RegisteredTestAgent; recipient: RegisteredTestAgent; path: string }> {
    const sender = await registerAgent(relay, { handle: uniqueHandle(`${label}-s`, 'acme'), name: 'Sender' });
    const handle = uniqueHandle(`${label}-r`, 'acme');
    const path = `/${handle}/hook`;
    const recipient = await registerAgent(relay, { handle, name: 'Recipient', notification_webhook_url: sink.url(path) });
    return { sender, recipient, path };
  }

  async function newEvents(sender: RegisteredTestAgent, recipient: RegisteredTestAgent, count: number): Promise<string[]> {
    const tasks: string[] = [];
    for (let index = 0; index < count; index++) tasks.push(await createTask(relay.url, sender, recipient));
    return tasks;
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms' } });
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    for (const started of processes) {
      started.signal('SIGCONT');
      await started.kill();
    }
    await relay?.stop();
    await db?.end();
    await sink?.stop();
  });

  it('looks up from the directory a recipient whose agent event it never saw', async () => {
    const { sender, recipient, path } = await pair('lookup');
    await eventually(
      async () => (await db.query('SELECT 1 FROM "notifier"."agent_targets" WHERE handle = $1', [recipient.agent.handle])).rowCount === 1,
      15000,
    );
    // The notifier forgets the recipient: no row, and no agent event left in the stream to replay.
    await relay.stopService('notifier');
    await db.query('DELETE FROM "notifier"."agent_targets" WHERE handle = $1', [recipient.agent.handle]);
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'test-purge-agent-events' });
    try {
      await jetStream.jsm.streams.purge(eventStreamName(relay.subjectPrefix), { filter: prefixedSubject(relay.subjectPrefix, AGENT_UPDATED_EVENT_SUBJECT) });
    } finally {
      await jetStream.connection.drain();
    }
    await relay.startService('notifier');

    const tasks = await newEvents(sender, recipient, 2);
    await eventually(() => sink.to(path).length >= 2, 30000);
    expect(new Set(sink.to(path).map(taskIdOf))).toEqual(new Set(tasks));
    for (const request of sink.to(path)) expect(verifyStandardWebhook(request, recipient.webhook_secret as string)).toBe(true);
  }, 60000);

  it('delivers while the replica holding the recipient agent event is stalled (SIGSTOP)', async () => {
    await relay.stopService('notifier');
    const stalled = await ServiceProcess.start(relay, 'notifier');
    processes.push(stalled);
    const { sender, recipient, path } = await pair('stall');
    await eventually(async () => (await db.query('SELECT 1 FROM "notifier"."agent_targets" WHERE handle = $1', [sender.agent.handle])).rowCount === 1, 15000);

    // The only notifier receives the next agent event and blocks on its table: it holds the event unacked.
    const lock = new pg.Client({ connectionString: testDatabaseUrl() });
    await lock.connect();
    let late: { recipient: RegisteredTestAgent; path: string };
    try {
      await lock.query('BEGIN');
      await lock.query('LOCK TABLE "notifier"."agent_targets" IN EXCLUSIVE MODE');
      const handle = uniqueHandle('stall-late', 'acme');
      const latePath = `/${handle}/hook`;
      late = { recipient: await registerAgent(relay, { handle, name: 'Late', notification_webhook_url: sink.url(latePath) }), path: latePath };
      await eventually(
        async () => (await db.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE '%agent_targets%'`)).rowCount! > 0,
        15000,
      );
      stalled.signal('SIGSTOP');
    } finally {
      await lock.query('ROLLBACK');
      await lock.end();
    }
    const stalledAt = Date.now();

    // A second replica takes over the event stream while the first one stays stalled (its pull requests run out).
    processes.push(await ServiceProcess.start(relay, 'notifier'));
    await sleep(Math.max(0, 11_000 - (Date.now() - stalledAt)));
    const tasks = await newEvents(sender, late.recipient, 5);
    const earlier = await newEvents(sender, recipient, 1);

    await eventually(() => sink.to(late.path).length >= 5 && sink.to(path).length >= 1, 45000);
    expect(new Set(sink.to(late.path).map(taskIdOf))).toEqual(new Set(tasks));
    expect(sink.to(path).map(taskIdOf)).toEqual(earlier);
    for (const request of sink.to(late.path)) expect(verifyStandardWebhook(request, late.recipient.webhook_secret as string)).toBe(true);
    const recorded = await db.query(`SELECT count(*)::int AS n FROM "notifier"."deliveries" WHERE task_id = ANY($1) AND channel = 'webhook'`, [tasks]);
    expect(recorded.rows[0].n).toBe(5);
  }, 120000);
});
