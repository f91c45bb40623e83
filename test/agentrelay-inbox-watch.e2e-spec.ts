import { randomUUID } from 'node:crypto';
import { RelayClient, RelayClientError, type InboxEvent } from '@app/relay-client';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { ok } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';

/**
 * The AgentRelay live inbox, `tasks/watch`: new handoffs addressed to the caller and every change
 * on its threads, whichever edge the change went through, with ids to resume from.
 */
describe('AgentRelay live inbox (tasks/watch)', () => {
  let relay: RelayHarness;
  let otherEdge: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    otherEdge = relay.urlOf(await relay.startEdge());
    const org = `inbox${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
  });

  afterAll(async () => {
    await relay.stop();
  });

  const watch = (agent: RegisteredTestAgent, lastEventId?: string): Promise<SseStream> =>
    openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${agent.api_key}`, ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} },
    );

  const handoff = async (from: RegisteredTestAgent, to: RegisteredTestAgent, text: string): Promise<string> => {
    const created = await ok(otherEdge, from.api_key, 'message/send', {
      recipient: to.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text }] },
    });
    return created.task_id as string;
  };

  const next = async (stream: SseStream): Promise<SseEvent> => {
    const event = await stream.next();
    if (!event) throw new Error('the inbox stream ended');
    expect(event.data).toMatchObject({ jsonrpc: '2.0', id: 'inbox' });
    return event;
  };

  const brief = (event: SseEvent): unknown[] => [event.data.result.event, event.data.result.task_id, event.data.result.status?.state];

  it("streams new handoffs and every change of the caller's threads, resumes after a drop with exactly what was missed, then goes on live", async () => {
    const inbox = await watch(bob);
    expect(inbox.status).toBe(200);
    const ready = await next(inbox);
    expect(ready.data.result).toEqual({ event: 'ready' });
    // An opaque id (docs/events.md#positions-and-stream-ids), not an outbox position.
    expect(ready.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(ready.id).not.toMatch(/^\d+$/);

    const first = await handoff(alice, bob, 'Review the users API');
    await handoff(alice, carol, 'Not for Bob');
    const created = await next(inbox);
    expect(created.data.result).toMatchObject({
      event: 'created',
      task_id: first,
      status: { state: 'pending' },
      sender: alice.agent.handle,
      recipient: bob.agent.handle,
      summary: 'Review the users API',
      message: { from: alice.agent.handle, body: 'Review the users API' },
    });
    await ok(otherEdge, bob.api_key, 'tasks/update', { task_id: first, transition: 'accept' });
    const accepted = await next(inbox);
    expect(brief(accepted)).toEqual(['accepted', first, 'accepted']);
    inbox.close();

    // Away: a message on the thread and a second handoff.
    await ok(otherEdge, alice.api_key, 'message/send', { task_id: first, message: { role: 'user', parts: [{ type: 'text', text: 'One more thing' }] } });
    const second = await handoff(alice, bob, 'And the orders API');

    const resumed = await watch(bob, accepted.id);
    const missed = [await next(resumed), await next(resumed)];
    expect(missed.map(brief)).toEqual([
      ['message_appended', first, 'accepted'],
      ['created', second, 'pending'],
    ]);
    expect(missed[0].data.result.message).toMatchObject({ from: alice.agent.handle, body: 'One more thing' });
    await ok(otherEdge, bob.api_key, 'tasks/update', { task_id: first, transition: 'complete', result_summary: 'Looks good' });
    const live = await next(resumed);
    expect(brief(live)).toEqual(['completed', first, 'completed']);
    expect(live.data.result.result_summary).toBe('Looks good');
    // The order shows in the events themselves; the ids are opaque, one per event.
    expect(new Set([accepted, ...missed, live].map((event) => event.id)).size).toBe(4);
    resumed.close();
  });

  it('answers an unknown Last-Event-ID with -32602 and any other dialect header the same way', async () => {
    const refused = await watch(bob, '99999999999');
    expect(refused.json?.error).toMatchObject({ code: -32602, message: expect.stringContaining('Last-Event-ID') });
    const garbled = await openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${bob.api_key}`, 'a2a-version': '1.0', 'last-event-id': 'yesterday' },
      { jsonrpc: '2.0', id: 1, method: 'tasks/watch', params: {} },
    );
    expect(garbled.json?.error).toMatchObject({ code: -32602 });
  });

  it('the relay client (used by agentrelay inbox --watch and the MCP server) reads it and resumes with the last id', async () => {
    const client = new RelayClient({ url: relay.url, apiKey: carol.api_key });
    const controller = new AbortController();
    const events = client.watchInbox({ signal: controller.signal });
    const ready = (await events.next()).value as InboxEvent;
    expect(ready.event).toBe('ready');
    const task = await handoff(alice, carol, 'For Carol');
    const created = (await events.next()).value as InboxEvent;
    expect(created).toMatchObject({ event: 'created', task_id: task, status: { state: 'pending' } });
    controller.abort();
    expect((await events.next()).done).toBe(true);

    await ok(otherEdge, carol.api_key, 'tasks/update', { task_id: task, transition: 'decline', reason: 'busy' });
    const again = client.watchInbox({ lastEventId: created.id });
    expect(((await again.next()).value as InboxEvent).event).toBe('rejected');
    await again.return(undefined);

    await expect(client.watchInbox({ lastEventId: 'nope' }).next()).rejects.toBeInstanceOf(RelayClientError);
  });
});
