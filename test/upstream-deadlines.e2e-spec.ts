import request from 'supertest';
import type { AgentRecord } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;
/** The dripping upstreams' own request deadline (`webhook_timeout_ms`, the least an agent may set). */
const UPSTREAM_DEADLINE_MS = 1000;
/** Below this, a median is the noise of a loaded machine rather than a wait behind someone else's deliveries. */
const LATENCY_FLOOR_MS = 1500;
const DRIPPING_UPSTREAMS = 4;
/** Handoffs to each dripping upstream: together they ask for every one of the notifier's 16 delivery slots. */
const HANDOFFS_EACH = 4;
const ANSWER_LIMIT_BYTES = 1024 * 1024;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** From the event's time (the body's `timestamp`) to the moment the receiver got the webhook. */
function latencyOf(webhook: SinkRequest): number {
  return webhook.receivedAt - Date.parse((JSON.parse(webhook.body) as { timestamp: string }).timestamp);
}

async function registerUpstream(relay: RelayHarness, upstream: UpstreamAgent, name: string, extra: Record<string, unknown> = {}): Promise<request.Response> {
  return request(relay.url)
    .post('/admin/agents')
    .set('authorization', ADMIN)
    .send({ handle: uniqueHandle(name, 'updl'), name, upstream: { card_url: upstream.cardUrl }, ...extra });
}

async function agentNamed(relay: RelayHarness, handle: string): Promise<string> {
  const shown = await request(relay.url)
    .get(`/admin/agents/${encodeURIComponent(handle)}`)
    .set('authorization', ADMIN)
    .expect(200);
  return (shown.body as AgentRecord).name;
}

describe('Upstream deadlines: an upstream that sends its headers and then drips holds nothing for longer than one deadline', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let sender: RegisteredTestAgent;
  let quietSender: RegisteredTestAgent;
  let quietRecipient: RegisteredTestAgent;
  let quietPath: string;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '2s,4s,30s',
        RELAY_UPSTREAM_MAX_ANSWER_BYTES: String(ANSWER_LIMIT_BYTES),
        RELAY_UPSTREAM_CARD_REFRESH_MS: '2000',
      },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'updl'), name: 'Alice' });
    quietSender = await registerAgent(relay, { handle: uniqueHandle('quiet-s', 'updl'), name: 'Quiet sender' });
    const handle = uniqueHandle('quiet-r', 'updl');
    quietPath = `/${handle}/hook`;
    quietRecipient = await registerAgent(relay, { handle, name: 'Quiet recipient', notification_webhook_url: sink.url(quietPath) });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
    await sink?.stop();
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
    }, 120_000);
    return webhooks.map(latencyOf);
  }

  it('keeps another agent’s webhook latency within twice a quiet run while four upstreams drip and one answers 200 MB', async () => {
    // The first deliveries of a fresh relay are slow (cold code paths and pools): not part of the baseline.
    await quietLatencies(3);
    const quiet = await quietLatencies(8);

    const dripping = await Promise.all(
      Array.from({ length: DRIPPING_UPSTREAMS }, () => startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', shapeAnswer: () => 'drip' })),
    );
    const oversized = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', shapeAnswer: () => ({ padBytes: 200 * 1024 * 1024 }) });
    upstreams.push(...dripping, oversized);
    const handles: string[] = [];
    for (const [index, upstream] of [...dripping, oversized].entries()) {
      const registered = await registerUpstream(relay, upstream, `noisy-${index}`, { webhook_timeout_ms: UPSTREAM_DEADLINE_MS });
      expect(registered.status).toBe(201);
      handles.push((registered.body.agent as AgentRecord).handle);
    }
    // Sent together: their deliveries overlap however long each create takes on a loaded machine (each drip ends at the 1 s deadline).
    await Promise.all(
      handles.flatMap((handle) =>
        Array.from({ length: HANDOFFS_EACH }, (_, handoff) =>
          createTask(relay.url, sender, { agent: { handle } } as RegisteredTestAgent, `Noisy handoff ${handoff}`),
        ),
      ),
    );
    // The dripping upstreams hold delivery slots now.
    await eventually(
      () => expect(dripping.reduce((sum, upstream) => sum + upstream.wire.dripping, 0)).toBeGreaterThanOrEqual(DRIPPING_UPSTREAMS * 2),
      60_000,
      20,
    );

    const noisy = await quietLatencies(8);
    const figures = { quiet_median_ms: median(quiet), noisy_median_ms: median(noisy), quiet, noisy };
    console.log(`webhook latency of the quiet agent beside dripping and oversized upstreams: ${JSON.stringify(figures)}`);
    expect(figures.noisy_median_ms).toBeLessThanOrEqual(Math.max(2 * figures.quiet_median_ms, LATENCY_FLOOR_MS));

    // Each dripping answer was cut off by the relay at the deadline (the upstreams drip for ever).
    for (const upstream of dripping) expect(upstream.wire.dripsClosed).toBeGreaterThanOrEqual(1);
    // The oversized answers were read up to the limit and no further: far from 200 MB each, and none to its end.
    expect(oversized.wire.paddedAnswersCompleted).toBe(0);
    expect(oversized.wire.paddedBytesSent).toBeLessThan(HANDOFFS_EACH * 32 * 1024 * 1024);
  }, 300_000);

  it('refuses at once (400) to register an agent whose card drips, and closes the connection', async () => {
    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(upstream);
    upstream.dripCard();
    const registered = await registerUpstream(relay, upstream, 'dripping-card');
    expect(registered.status).toBe(400);
    expect(JSON.stringify(registered.body)).toMatch(/agent card could not be read \(no complete answer within \d+ ms\)/);
    await eventually(() => expect([upstream.wire.dripping, upstream.wire.dripsClosed]).toEqual([0, 1]), 30_000);
  }, 60_000);

  it('refreshes every other agent’s card on schedule while one agent’s card drips', async () => {
    const dripper = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    const healthy = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(dripper, healthy);
    const dripperRegistered = await registerUpstream(relay, dripper, 'card-dripper');
    expect(dripperRegistered.status).toBe(201);
    // From now on its card drips: the next scheduled round reads it first (it was read longest ago).
    dripper.dripCard();
    const healthyRegistered = await registerUpstream(relay, healthy, 'card-healthy');
    expect(healthyRegistered.status).toBe(201);
    const healthyHandle = (healthyRegistered.body.agent as AgentRecord).handle;
    healthy.setCard({ name: 'Renamed upstream' });

    await eventually(async () => expect(await agentNamed(relay, healthyHandle)).toBe('Renamed upstream'), 90_000, 250);
    // The dripping card was read and cut off, again at each round, and its refresh recorded as failed.
    await eventually(() => expect(dripper.wire.dripsClosed).toBeGreaterThanOrEqual(1), 60_000);
    const dripperHandle = (dripperRegistered.body.agent as AgentRecord).handle;
    const status = await eventually(async () => {
      const shown = await request(relay.url)
        .get(`/admin/agents/${encodeURIComponent(dripperHandle)}/upstream`)
        .set('authorization', ADMIN)
        .expect(200);
      expect(shown.body.card.last_refresh_error).toMatch(/no complete answer within \d+ ms/);
      return shown.body;
    }, 60_000);
    expect(status.upstream.url).toBe(dripper.url);
  }, 180_000);
});
