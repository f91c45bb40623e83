import request from 'supertest';
import { PUSH_CONFIG_SUBJECTS, type ParticipantRef } from '@app/contracts';
import { MetricsServer } from '@app/metrics';
import { NatsRpcClient } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { BlackHole } from './support/black-hole';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const TIMEOUT_MS = 2000;
/** Below this, a median is noise of a loaded machine rather than a wait behind someone else's deliveries. */
const LATENCY_FLOOR_MS = 750;
const NOISY_TASKS = 5;
const CONFIGS_PER_TASK = 10;

function ref(agent: RegisteredTestAgent): ParticipantRef {
  return { id: agent.agent.id, handle: agent.agent.handle, name: agent.agent.name, role: agent.agent.role ?? null };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** From the event's time (the body's `timestamp`) to the moment the receiver got the webhook. */
function latencyOf(webhook: SinkRequest): number {
  return webhook.receivedAt - Date.parse((JSON.parse(webhook.body) as { timestamp: string }).timestamp);
}

interface Noise {
  /** `http://127.0.0.1:<port>`, as the delivery log names a delivery's host. */
  origin: string;
  /** Where the noisy agent's `config`-th push config points: a destination that hangs past the timeout. */
  url(config: number, path: string): string;
  /** Connections (or requests) the noisy destination has had. */
  hits(): number;
  stop(): Promise<void>;
}

async function blackHole(): Promise<Noise> {
  const hole = await BlackHole.start();
  return { origin: hole.url(''), url: (_config, path) => hole.url(path), hits: () => hole.connections, stop: () => hole.stop() };
}

async function lateAnswerer(): Promise<Noise> {
  const sink = await WebhookSink.start();
  sink.plan('/noise', [{ status: 200, delayMs: TIMEOUT_MS * 2 + 1000 }]);
  return { origin: sink.url(''), url: () => sink.url('/noise'), hits: () => sink.requests.length, stop: () => sink.stop() };
}

/** One black hole per config of a task: no destination's share binds, only the owner's does. */
async function blackHoles(): Promise<Noise> {
  const holes = await Promise.all(Array.from({ length: CONFIGS_PER_TASK }, () => BlackHole.start()));
  return {
    origin: holes[0].url(''),
    url: (config, path) => holes[config].url(path),
    hits: () => holes.reduce((sum, hole) => sum + hole.connections, 0),
    stop: async () => {
      await Promise.all(holes.map((hole) => hole.stop()));
    },
  };
}

describe.each([
  ['never answers', blackHole, true],
  ['answers after the timeout', lateAnswerer, true],
  // The shares of slots alone, with the breaker's threshold out of reach.
  ['never answers, without the breaker', blackHole, false],
  // The owner's share alone: ten destinations, none failing often enough to open its breaker.
  ['never answers, at ten destinations, without the breaker', blackHoles, false],
])('fair delivery: one agent’s push configs at a receiver that %s', (_kind, startNoise, withBreaker) => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let noise: Noise;
  let rpc: NatsRpcClient;
  let noisy: RegisteredTestAgent;
  let noisyPeer: RegisteredTestAgent;
  let quietSender: RegisteredTestAgent;
  let quietRecipient: RegisteredTestAgent;
  let quietPath: string;
  const noisyTasks: string[] = [];

  beforeAll(async () => {
    sink = await WebhookSink.start();
    noise = await startNoise();
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
        // Spans 36 s: a delivery held by the breaker for longer becomes a dead letter.
        RELAY_WEBHOOK_RETRY_SCHEDULE: '2s,4s,30s',
        RELAY_NOTIFIER_BREAKER_OPEN_MS: '3000',
        ...(withBreaker ? {} : { RELAY_NOTIFIER_BREAKER_FAILURES: '1000' }),
      },
    });
    rpc = relay.edge.get(NatsRpcClient);
    noisy = await registerAgent(relay, { handle: uniqueHandle('noisy', 'acme'), name: 'Noisy' });
    noisyPeer = await registerAgent(relay, { handle: uniqueHandle('noisy-peer', 'acme'), name: 'Noisy peer' });
    quietSender = await registerAgent(relay, { handle: uniqueHandle('quiet-s', 'acme'), name: 'Quiet sender' });
    const handle = uniqueHandle('quiet-r', 'acme');
    quietPath = `/${handle}/hook`;
    quietRecipient = await registerAgent(relay, { handle, name: 'Quiet recipient', notification_webhook_url: sink.url(quietPath) });
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
    await noise?.stop();
  });

  /** The quiet agent's webhook latencies over `count` handoffs sent a little apart. */
  async function quietLatencies(count: number): Promise<number[]> {
    const before = sink.to(quietPath).length;
    for (let index = 0; index < count; index++) {
      await createTask(relay.url, quietSender, quietRecipient, `Quiet handoff ${index}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const webhooks = await eventually(() => {
      const received = sink.to(quietPath).slice(before);
      expect(received.length).toBe(count);
      return received;
    }, 120000);
    return webhooks.map(latencyOf);
  }

  /** Every push delivery of the noisy agent's tasks, from the admin API. */
  async function noisyDeliveries(): Promise<Array<{ status: string; attempts: number; target_host: string; last_error: string | null }>> {
    const lists = await Promise.all(
      noisyTasks.map(
        async (taskId) =>
          (
            await request(relay.url)
              .get(`/admin/deliveries?task_id=${encodeURIComponent(taskId)}&limit=500`)
              .set(admin)
              .expect(200)
          ).body.deliveries as Array<{ status: string; attempts: number; target_host: string; channel: string; last_error: string | null }>,
      ),
    );
    return lists.flat().filter((delivery) => delivery.channel === 'push');
  }

  it('keeps another agent’s webhook latency within twice a quiet run while 50 push configs hang', async () => {
    // The first deliveries of a fresh relay are slow (cold code paths and pools): not part of the baseline.
    await quietLatencies(3);
    const quiet = await quietLatencies(8);

    // The noisy agent: 50 push configs over 5 tasks, all at the hanging destination, and one more
    // at a healthy one; then 4 events on each task: 200 deliveries that each hang for the timeout.
    for (let task = 0; task < NOISY_TASKS; task++) {
      const taskId = await createTask(relay.url, noisy, noisyPeer, `Noisy handoff ${task}`);
      noisyTasks.push(taskId);
      for (let config = 0; config < CONFIGS_PER_TASK; config++) {
        await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
          caller: ref(noisy),
          task_id: taskId,
          version: '1.0',
          config: { id: `hang-${config}`, url: noise.url(config, `/hang/${task}/${config}`) },
        });
      }
    }
    await rpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(noisyPeer),
      task_id: noisyTasks[0],
      version: '1.0',
      config: { id: 'healthy', url: sink.url('/healthy-push') },
    });
    for (const taskId of noisyTasks) {
      await ok(relay.url, noisyPeer.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
      for (let message = 0; message < 3; message++) {
        await ok(relay.url, noisy.api_key, 'message/send', { task_id: taskId, message: { role: 'user', parts: [{ type: 'text', text: `Ping ${message}` }] } });
      }
    }
    await eventually(() => expect(noise.hits()).toBeGreaterThanOrEqual(4), 30000);

    const noisyRun = await quietLatencies(8);
    const figures = { quiet_median_ms: median(quiet), noisy_median_ms: median(noisyRun), quiet, noisy: noisyRun };
    console.log(`webhook latency of the quiet agent (${_kind}): ${JSON.stringify(figures)}`);
    expect(figures.noisy_median_ms).toBeLessThanOrEqual(Math.max(2 * figures.quiet_median_ms, LATENCY_FLOOR_MS));
  }, 300000);

  if (!withBreaker) return;

  it('opens the hanging destination’s breaker, holds its deliveries without burning their attempts, and leaves other destinations alone', async () => {
    const notifier = relay.services.get('notifier')![0];
    const scrape = async (): Promise<PrometheusScrape> => PrometheusScrape.parse(await (await fetch(`${notifier.get(MetricsServer).url}/metrics`)).text());
    await eventually(
      async () => expect((await scrape()).value('agentrelay_delivery_breaker_transitions_total', { to: 'open' })).toBeGreaterThanOrEqual(1),
      60000,
    );
    const opened = await scrape();
    expect(opened.value('agentrelay_delivery_breakers', { state: 'open' }) + opened.value('agentrelay_delivery_breakers', { state: 'half_open' })).toBe(1);

    // The healthy push config of the same tasks got every event of its task (4), each at the first attempt.
    await eventually(() => expect(sink.to('/healthy-push').length).toBe(4), 60000);
    const deliveries = await noisyDeliveries();
    const hanging = deliveries.filter((delivery) => delivery.target_host === noise.origin);
    const healthy = deliveries.filter((delivery) => delivery.target_host !== noise.origin);
    expect(healthy.map((delivery) => [delivery.status, delivery.attempts])).toEqual(Array.from({ length: 4 }, () => ['succeeded', 1]));
    expect(hanging).toHaveLength(NOISY_TASKS * CONFIGS_PER_TASK * 4);
    // Without the breaker each would be tried 4 times (800 requests) and end a dead letter; held by
    // it, a few are tried (the first ones in flight, then one probe per window) and the rest wait.
    const attempts = hanging.reduce((sum, delivery) => sum + delivery.attempts, 0);
    expect(attempts).toBeLessThan(hanging.length / 2);
    expect(hanging.filter((delivery) => delivery.attempts === 0).length).toBeGreaterThan(hanging.length / 2);

    // Held for longer than the retry schedule spans, a delivery is given up as a dead letter that says why.
    const expired = await eventually(async () => {
      const held = (await noisyDeliveries()).filter((delivery) => delivery.target_host === noise.origin && delivery.attempts === 0);
      expect(held.filter((delivery) => delivery.status !== 'dead')).toEqual([]);
      return held;
    }, 120000);
    expect(expired.length).toBeGreaterThan(hanging.length / 2);
    expect(new Set(expired.map((delivery) => delivery.last_error))).toEqual(new Set([expect.stringMatching(/circuit breaker open/)]));
  }, 240000);
});
