import { once } from 'node:events';
import http from 'node:http';
import { MetricsServer } from '@app/metrics';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { parsePrometheusText } from './support/prometheus-text';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { createTask } from './support/tasks';

const UNREAD_STREAMS = 10;
const BIG_MESSAGES = 30;
const PROBES = 5;
/** RELAY_STREAM_BUFFER_BYTES by default, and an event as large as one NATS message. */
const STREAM_BUFFER_BYTES = 2 * 1024 * 1024;
const EVENT_BYTES_MAX = 1024 * 1024;
/**
 * Latencies this small are scheduling noise on a loaded machine, not a neighbour's harm: the suite
 * runs another test file beside this one (in CI, one that kills and restarts whole relays), and a
 * stream stuck behind the flood's 12 MB would wait seconds.
 */
const LATENCY_FLOOR_MS = 1000;

/** A message of four text parts of 99,000 characters (about 400 KB, and as much again in its event). */
function bigMessage(index: number): { parts: Array<{ type: 'text'; text: string }> } {
  return { parts: Array.from({ length: 4 }, (_, part) => ({ type: 'text' as const, text: `big ${index}.${part} `.padEnd(99_000, 'x') })) };
}

/** A subscription to a task whose client never reads a byte of it: the socket fills, then the edge holds what it cannot send. */
async function openUnreadSubscription(url: string, agent: RegisteredTestAgent, taskId: string): Promise<{ destroy(): void }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } });
  const request = http.request(`${url}/a2a`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'a2a-version': '1.0',
      'x-api-key': agent.api_key,
      'content-length': Buffer.byteLength(body),
    },
  });
  request.on('error', () => undefined);
  request.end(body);
  const [response] = (await once(request, 'response')) as [http.IncomingMessage];
  expect(response.statusCode).toBe(200);
  response.pause();
  response.on('error', () => undefined);
  return { destroy: () => request.destroy() };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Streams follow their client: a client that stops reading neither grows the shared edge's memory
 * past its stream buffer nor slows other agents' streams; the edge closes it after RELAY_STREAM_STALL_MS.
 */
describe('stream backpressure: an agent whose streams are never read', () => {
  let relay: RelayHarness;
  let eve: RegisteredTestAgent;
  let mallory: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_STREAM_STALL_MS: '5000' } });
    eve = await registerAgent(relay, { handle: uniqueHandle('eve', 'noisy'), name: 'Eve' });
    mallory = await registerAgent(relay, { handle: uniqueHandle('mallory', 'noisy'), name: 'Mallory' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'quiet'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'quiet'), name: 'Frank' });
  }, 60_000);

  afterAll(async () => {
    await relay?.stop();
  });

  async function metric(name: string): Promise<number> {
    const families = parsePrometheusText(await (await fetch(`${relay.edge.get(MetricsServer).url}/metrics`)).text());
    return families.get(name)?.samples.reduce((sum, sample) => sum + sample.value, 0) ?? 0;
  }

  /** How long each of Frank's replies takes to reach Bob's open stream of their task. */
  async function replyLatencies(stream: SseStream, taskId: string, label: string): Promise<number[]> {
    const latencies: number[] = [];
    for (let probe = 0; probe < PROBES; probe++) {
      const text = `${label} ${probe}`;
      const sent = performance.now();
      await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: { parts: [{ type: 'text', text }] } });
      for (;;) {
        const event = (await stream.next()) as SseEvent;
        if (event.data.result?.statusUpdate?.status?.message?.parts?.[0]?.text === text) break;
      }
      latencies.push(performance.now() - sent);
    }
    return latencies;
  }

  /** Mallory's big messages into a task, one after another. */
  async function floodOf(taskId: string): Promise<void> {
    for (let index = 0; index < BIG_MESSAGES; index++) await ok(relay.url, mallory.api_key, 'message/send', { task_id: taskId, message: bigMessage(index) });
  }

  /** Bob's reply latencies while a flood runs; the flood is awaited too. */
  async function replyLatenciesDuring(flood: Promise<void>, stream: SseStream, taskId: string, label: string): Promise<number[]> {
    try {
      return await replyLatencies(stream, taskId, label);
    } finally {
      await flood;
    }
  }

  it('closes the unread streams, holds a bounded amount meanwhile, and leaves other agents’ streams within 2× of what the same flood costs them unstreamed', async () => {
    const quietTask = await createTask(relay.url, bob, frank, 'a quiet thread');
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: quietTask, transition: 'accept' });
    const bobStream = await openSse(
      `${relay.url}/a2a`,
      { 'x-api-key': bob.api_key, 'a2a-version': '1.0' },
      { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: quietTask } },
    );
    try {
      await bobStream.next();
      const quiet = median(await replyLatencies(bobStream, quietTask, 'quiet'));
      // The same flood with nobody streaming it: what the big messages cost everyone anyway (CPU of a small machine), beside which the unread streams' harm is measured.
      const controlTask = await createTask(relay.url, mallory, eve, 'the flood, unstreamed');
      const control = median(await replyLatenciesDuring(floodOf(controlTask), bobStream, quietTask, 'control'));

      const noisyTask = await createTask(relay.url, mallory, eve, 'the noisy thread');
      const unread = await Promise.all(Array.from({ length: UNREAD_STREAMS }, () => openUnreadSubscription(relay.url, eve, noisyTask)));
      let peakBuffered = 0;
      const sampler = setInterval(() => {
        void metric('agentrelay_sse_buffered_bytes').then((bytes) => (peakBuffered = Math.max(peakBuffered, bytes)));
      }, 100);
      try {
        const noisy = median(await replyLatenciesDuring(floodOf(noisyTask), bobStream, quietTask, 'noisy'));
        process.stdout.write(
          `stream backpressure: Bob's reply latency ${quiet.toFixed(0)} ms alone, ${control.toFixed(0)} ms beside the flood, ${noisy.toFixed(0)} ms beside it with ${UNREAD_STREAMS} unread streams\n`,
        );

        expect(noisy).toBeLessThanOrEqual(Math.max(2 * control, LATENCY_FLOOR_MS));
        await eventually(async () => expect(await metric('agentrelay_sse_streams_stalled_total')).toBe(UNREAD_STREAMS), 120_000);
        // The edge let go of them (a paused client socket notices only when it reads again).
        await eventually(async () => expect(await metric('agentrelay_sse_streams_open')).toBe(1), 60_000);
      } finally {
        clearInterval(sampler);
        for (const stream of unread) stream.destroy();
      }
      // Ten streams of 30 events of about 400 KB each would hold some 120 MB unbounded; each holds at most its buffer and the event being written.
      process.stdout.write(`stream backpressure: peak unsent ${(peakBuffered / 2 ** 20).toFixed(1)} MiB in ${UNREAD_STREAMS} unread streams\n`);
      expect(peakBuffered).toBeGreaterThan(0);
      expect(peakBuffered).toBeLessThanOrEqual(UNREAD_STREAMS * (STREAM_BUFFER_BYTES + EVENT_BYTES_MAX));
    } finally {
      bobStream.close();
    }
  }, 300_000);
});
