import { randomUUID } from 'node:crypto';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, ok } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { createTask } from './support/tasks';

/**
 * The ids of the agents' streams (docs/events.md#positions-and-stream-ids) tell an agent nothing
 * beyond its own events: no relay-wide counter, no id that works on another agent's or task's
 * stream; and they still resume on any edge of the relay.
 */
describe('stream ids are opaque and the caller’s own', () => {
  let relay: RelayHarness;
  let otherEdge: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let dave: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    otherEdge = relay.urlOf(await relay.startEdge());
    const org = `ids${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
    dave = await registerAgent(relay, { handle: uniqueHandle('dave', org), name: 'Dave' });
  }, 120_000);

  afterAll(async () => {
    await relay?.stop();
  });

  const watch = (agent: RegisteredTestAgent, lastEventId?: string, url = relay.url): Promise<SseStream> =>
    openSse(
      `${url}/a2a`,
      { authorization: `Bearer ${agent.api_key}`, ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} },
    );

  const subscribe = (agent: RegisteredTestAgent, taskId: string, lastEventId?: string, url = relay.url): Promise<SseStream> =>
    openSse(
      `${url}/a2a`,
      { authorization: `Bearer ${agent.api_key}`, 'a2a-version': '1.0', ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 'sub', method: 'SubscribeToTask', params: { id: taskId } },
    );

  const first = async (stream: SseStream): Promise<SseEvent> => {
    try {
      expect({ status: stream.status, error: stream.json?.error }).toEqual({ status: 200, error: undefined });
      const event = await stream.next();
      if (!event) throw new Error('the stream ended');
      return event;
    } finally {
      stream.close();
    }
  };

  const readyId = async (agent: RegisteredTestAgent): Promise<string> => {
    const ready = await first(await watch(agent));
    expect(ready.data.result).toEqual({ event: 'ready' });
    return ready.id as string;
  };

  it("gives a live inbox a ready id that no other agent's events move, and that is no position", async () => {
    const before = await readyId(alice);
    expect(before).not.toMatch(/^\d+$/);

    // Only other agents' tasks get events.
    const theirs = await createTask(relay.url, carol, dave, 'Between Carol and Dave');
    await ok(otherEdge, dave.api_key, 'tasks/update', { task_id: theirs, transition: 'accept' });
    await ok(relay.url, carol.api_key, 'message/send', { task_id: theirs, message: { role: 'user', parts: [{ type: 'text', text: 'and more' }] } });

    expect(await readyId(alice)).toBe(before);
    // Two agents at the same point of their inboxes still see different ids.
    expect(await readyId(bob)).not.toBe(before);

    // Alice's own event moves her inbox on.
    await createTask(relay.url, bob, alice, 'For Alice');
    expect(await readyId(alice)).not.toBe(before);
  });

  it("refuses an id of another agent's inbox, or one that is no id, with -32602 naming Last-Event-ID", async () => {
    const bobs = await readyId(bob);
    for (const lastEventId of [bobs, '1', 'not-an-id']) {
      const refused = await watch(alice, lastEventId);
      expect(refused.status).toBe(200);
      expectRpcError(refused.json?.error, { code: -32602, field: 'Last-Event-ID' });
    }
  });

  it('resumes a live inbox on another edge of the relay with the id one edge gave', async () => {
    const ready = await readyId(alice);
    const task = await createTask(otherEdge, bob, alice, 'While Alice was away');
    const missed = await first(await watch(alice, ready, otherEdge));
    expect(missed.data.result).toMatchObject({ event: 'created', task_id: task, sender: bob.agent.handle });

    await ok(relay.url, alice.api_key, 'tasks/update', { task_id: task, transition: 'accept' });
    const next = await first(await watch(alice, missed.id, relay.url));
    expect(next.data.result).toMatchObject({ event: 'accepted', task_id: task });
  });

  it("resumes a task stream with its own id on another edge, and refuses the id on another task or to the task's other party", async () => {
    const one = await createTask(relay.url, alice, bob, 'Task one');
    const two = await createTask(relay.url, alice, bob, 'Task two');
    const opened = await first(await subscribe(alice, one));
    expect(opened.id).not.toMatch(/^\d+$/);

    await ok(otherEdge, bob.api_key, 'tasks/update', { task_id: one, transition: 'accept' });
    const resumed = await first(await subscribe(alice, one, opened.id, otherEdge));
    expect(resumed.data.result.statusUpdate).toMatchObject({ taskId: one, status: { state: 'TASK_STATE_WORKING' } });

    const onAnotherTask = await subscribe(alice, two, opened.id);
    expectRpcError(onAnotherTask.json?.error, { code: -32602, field: 'Last-Event-ID' });
    const byTheOtherParty = await subscribe(bob, one, opened.id);
    expectRpcError(byTheOtherParty.json?.error, { code: -32602, field: 'Last-Event-ID' });
  });
});
