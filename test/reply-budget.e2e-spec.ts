import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, rpc } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { createTask } from './support/tasks';

/** Few slots, so that a leak of one per call would wedge the tasks service within a handful of calls. */
const MAX_IN_FLIGHT = 4;
const REPLAYS = 3 * MAX_IN_FLIGHT;
const BIG_APPENDS = 3;

/** A message of four text parts of 99,000 characters: three of them make a replay larger than one NATS message. */
function bigMessage(letter: string): { parts: Array<{ type: 'text'; text: string }> } {
  return { parts: Array.from({ length: 4 }, (_, part) => ({ type: 'text' as const, text: `${letter}${part}`.padEnd(99_000, letter) })) };
}

async function readEvents(stream: SseStream, count: number): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  while (events.length < count) {
    const event = await stream.next();
    if (!event) break;
    events.push(event);
  }
  return events;
}

/**
 * Replays whose events add up to more than NATS's max_payload: they page by bytes and reach the
 * client, and no number of them takes the tasks service away from the other agents.
 */
describe('replies within the transport budget: large replays page, and never wedge the tasks service', () => {
  let relay: RelayHarness;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let ann: RegisteredTestAgent;
  let taskId: string;
  let createdId: string;
  let inboxStart: string;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT), NATS_REQUEST_TIMEOUT_MS: '3000' } });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
    ann = await registerAgent(relay, { handle: uniqueHandle('ann', 'acme'), name: 'Ann' });

    const watch = await openSse(`${relay.url}/a2a`, { 'x-api-key': bob.api_key }, { jsonrpc: '2.0', id: 1, method: 'tasks/watch', params: {} });
    inboxStart = ((await watch.next()) as SseEvent).id as string;
    watch.close();

    taskId = await createTask(relay.url, bob, frank, 'Send me the big logs.');
    const opening = await subscribe(bob, taskId);
    createdId = ((await opening.next()) as SseEvent).id as string;
    opening.close();
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    for (const letter of ['a', 'b', 'c'].slice(0, BIG_APPENDS)) {
      await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: bigMessage(letter) });
    }
  }, 120_000);

  afterAll(async () => {
    await relay?.stop();
  });

  function subscribe(agent: RegisteredTestAgent, id: string, lastEventId?: string): Promise<SseStream> {
    return openSse(
      `${relay.url}/a2a`,
      { 'x-api-key': agent.api_key, 'a2a-version': '1.0', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id } },
    );
  }

  it(`replays more than one NATS message of events ${REPLAYS} times over, every event once, while other agents are served`, async () => {
    for (let replay = 0; replay < REPLAYS; replay++) {
      const stream = await subscribe(bob, taskId, createdId);
      try {
        expect({ status: stream.status, error: stream.json?.error }).toEqual({ status: 200, error: undefined });
        const events = await readEvents(stream, 1 + BIG_APPENDS);
        const texts = events.flatMap((event) =>
          (event.data.result?.statusUpdate?.status?.message?.parts ?? []).map((part: { text: string }) => part.text.slice(0, 2)),
        );
        expect(texts).toEqual(['a0', 'a1', 'a2', 'a3', 'b0', 'b1', 'b2', 'b3', 'c0', 'c1', 'c2', 'c3']);
        expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
      } finally {
        stream.close();
      }
    }

    const other = await rpc(relay.url, ann.api_key, 'message/send', {
      recipient: bob.agent.handle,
      message: { parts: [{ type: 'text', text: 'still there?' }] },
    });
    expect({ status: other.status, error: other.body.error }).toEqual({ status: 200, error: undefined });
    const ready = await fetch(`${relay.url}/readyz`);
    expect(ready.status).toBe(200);
  }, 240_000);

  it("resumes the sender's live inbox past the large events, each in its order", async () => {
    const watch = await openSse(
      `${relay.url}/a2a`,
      { 'x-api-key': bob.api_key, 'last-event-id': inboxStart },
      { jsonrpc: '2.0', id: 1, method: 'tasks/watch', params: {} },
    );
    try {
      expect({ status: watch.status, error: watch.json?.error }).toEqual({ status: 200, error: undefined });
      const seen: string[] = [];
      await eventually(async () => {
        const event = await watch.next();
        if (event?.data.result?.task_id === taskId) seen.push(event.data.result.event as string);
        expect(seen.filter((name) => name === 'message_appended')).toHaveLength(BIG_APPENDS);
      }, 60_000);
      expect(seen.slice(0, 2)).toEqual(['created', 'accepted']);
    } finally {
      watch.close();
    }
  }, 120_000);
});
