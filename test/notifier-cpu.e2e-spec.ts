import { readFileSync } from 'node:fs';
import { eventStreamName, openJetStream } from '@app/messaging';
import { registerAgent, uniqueHandle } from './support/agents';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { testNatsUrl } from './support/test-env';
import { WebhookSink } from './support/webhook-sink';

/** CPU time (user + system) of a process so far, in ms, from /proc/<pid>/stat. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  // After "pid (comm) ": state is field 0, utime field 11, stime field 12 (in clock ticks, 100 per second).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

const EVENTS = Number(process.env.RELAY_NOTIFIER_CPU_EVENTS || 400);
const IDLE_SECONDS = Number(process.env.RELAY_NOTIFIER_CPU_IDLE_SECONDS || 20);
/** With 0, the recipient has no webhook: only the consumption of each event is measured, no delivery. */
const WITH_WEBHOOK = process.env.RELAY_NOTIFIER_CPU_WEBHOOK !== '0';
const measure = process.env.RELAY_NOTIFIER_CPU === '1' ? describe : describe.skip;

/**
 * A measurement, not a check (runs only with RELAY_NOTIFIER_CPU=1): the notifier as a process of
 * its own, N handoffs through the real edge and tasks service, each delivered to a local webhook;
 * prints the notifier's CPU ms per event and its CPU ms per second at rest.
 */
measure('notifier CPU per event and at rest', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let notifier: ServiceProcess;

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ services: ['directory', 'tasks'], env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true' } });
    notifier = await ServiceProcess.start(relay, 'notifier', { LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await notifier?.kill();
    await relay?.stop();
    await sink?.stop();
  });

  /** Events of the stream the notifier's durable consumer has not acknowledged yet. */
  async function pendingEvents(): Promise<number> {
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'test-cpu-pending' });
    try {
      const info = await jetStream.jsm.consumers.info(eventStreamName(relay.subjectPrefix), 'notifier');
      return info.num_pending + info.num_ack_pending;
    } finally {
      await jetStream.connection.close();
    }
  }

  it('measures', async () => {
    const pid = notifier.pid as number;
    const sender = await registerAgent(relay, { handle: uniqueHandle('cpu-s', 'acme'), name: 'Sender' });
    const path = '/cpu/hook';
    const recipient = await registerAgent(relay, { handle: uniqueHandle('cpu-r', 'acme'), name: 'Recipient', notification_webhook_url: sink.url(path) });
    if (!WITH_WEBHOOK) {
      // The warm-up below goes to the webhook; then the recipient drops it.
      const update = await fetch(`${relay.url}/admin/agents/${recipient.agent.handle}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ notification_webhook_url: null }),
      });
      expect(update.status).toBe(200);
    }
    // Warm-up: the first events compile the hot paths.
    for (let i = 0; i < 20; i++) await createTask(relay.url, sender, recipient);
    if (WITH_WEBHOOK) await eventually(() => sink.to(path).length >= 20, 30000);
    await new Promise((resolve) => setTimeout(resolve, 3000));

    const idleStart = cpuMs(pid);
    const idleFrom = Date.now();
    await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
    const idlePerSecond = (cpuMs(pid) - idleStart) / ((Date.now() - idleFrom) / 1000);

    const before = sink.to(path).length;
    const start = cpuMs(pid);
    const from = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < EVENTS) {
          next++;
          await createTask(relay.url, sender, recipient);
        }
      }),
    );
    if (WITH_WEBHOOK) await eventually(() => sink.to(path).length >= before + EVENTS, 120000, 20);
    else await eventually(async () => (await pendingEvents()) === 0, 120000, 20);
    const elapsedS = (Date.now() - from) / 1000;
    const busy = cpuMs(pid) - start;
    const line = {
      with_webhook: WITH_WEBHOOK,
      events: EVENTS,
      notifier_cpu_ms_total: busy,
      notifier_cpu_ms_per_event: Number((busy / EVENTS).toFixed(3)),
      notifier_cpu_ms_per_event_less_idle: Number(((busy - idlePerSecond * elapsedS) / EVENTS).toFixed(3)),
      elapsed_s: Number(elapsedS.toFixed(2)),
      idle_cpu_ms_per_s: Number(idlePerSecond.toFixed(3)),
      idle_seconds: IDLE_SECONDS,
    };
    process.stdout.write(`NOTIFIER_CPU ${JSON.stringify(line)}\n`);
    if (WITH_WEBHOOK) expect(sink.to(path).length).toBeGreaterThanOrEqual(before + EVENTS);
  }, 300000);
});
