import { randomUUID } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MetricsServer } from '@app/metrics';
import { TaskEventFeed } from '../apps/edge/src/streams/task-event-feed';
import { A2aRawClient, expectNext, message } from './support/a2a-raw';
import { eventually } from './support/eventually';
import type { Json } from './support/json-rpc';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';

/** A full garbage collection, so that heap figures compare what is still held. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/**
 * Streams built from the task's event log (docs/events.md#positions-and-stream-ids): one stream
 * event per task event, the same bytes for every subscriber on any edge, resumable with
 * Last-Event-ID, and nothing held once the clients are gone.
 */
describe('A2A streams from the task event log', () => {
  const raw = new A2aRawClient();
  const { v1, newTask, call, stream } = raw;
  let relay: RelayHarness;
  let otherEdge: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await raw.start();
    otherEdge = relay.urlOf(await relay.startEdge());
    alice = await raw.agent('alice');
    bob = await raw.agent('bob');
  });

  afterAll(async () => {
    await raw.stop();
  });

  /** An AgentRelay call by `agent` on the second edge; fails the test on an error. */
  const onOtherEdge = async (agent: RegisteredTestAgent, method: string, params: Json): Promise<Json> => {
    const { body } = await call(agent, '/a2a', method, params, undefined, otherEdge);
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result as Json;
  };

  /** Two SubscribeToTask streams with the same JSON-RPC id, so that identical event sequences are identical bytes. */
  const twoSubscribers = async (taskId: string): Promise<[SseStream, SseStream]> => {
    const body = { jsonrpc: '2.0', id: 'same', method: 'SubscribeToTask', params: { id: taskId } };
    return Promise.all([relay.url, otherEdge].map((base) => openSse(`${base}/a2a`, { 'x-api-key': alice.api_key, 'a2a-version': '1.0' }, body))) as Promise<
      [SseStream, SseStream]
    >;
  };

  const states = (events: SseEvent[]): string[] =>
    events.map((event) => {
      const result = event.data.result as Json;
      if (result.task) return `task:${result.task.status.state}`;
      if (result.artifactUpdate) return `artifact:${result.artifactUpdate.append ? 'append' : 'new'}:${result.artifactUpdate.lastChunk}`;
      return `status:${result.statusUpdate.status.state}`;
    });

  it('accept-then-complete in one call yields two events, in order, with the same bytes and ids on subscribers of two edges', async () => {
    const task = await newTask(alice, bob, 'burst');
    const [first, second] = await twoSubscribers(task.id as string);
    const firstTask = await first.next();
    const secondTask = await second.next();
    expect(firstTask?.raw).toBe(secondTask?.raw);
    // CompleteTask on a submitted task accepts it and completes it in one call, through the other edge.
    await v1(bob, '/a2a', 'CompleteTask', { id: task.id }, otherEdge);
    const [firstRest, secondRest] = await Promise.all([first.rest(), second.rest()]);
    expect(states([firstTask as SseEvent, ...firstRest])).toEqual(['task:TASK_STATE_SUBMITTED', 'status:TASK_STATE_WORKING', 'status:TASK_STATE_COMPLETED']);
    expect(firstRest.map((event) => event.raw)).toEqual(secondRest.map((event) => event.raw));
    // The ids are opaque (docs/events.md#positions-and-stream-ids): one per event, none a position.
    const ids = [firstTask?.id, ...firstRest.map((event) => event.id)];
    expect(new Set(ids).size).toBe(3);
    expect(ids.some((id) => /^[0-9]+$/.test(id ?? ''))).toBe(false);
  });

  it('two concurrent streams on one task receive identical sequences, byte for byte, ids included', async () => {
    const task = await newTask(alice, bob, 'watch closely');
    const [first, second] = await twoSubscribers(task.id as string);
    const opened = await Promise.all([first.next(), second.next()]);
    await onOtherEdge(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
    await onOtherEdge(bob, 'message/send', { task_id: task.id, message: { role: 'agent', parts: [{ type: 'text', text: 'on it' }] } });
    for (const [index, text] of ['part one, ', 'part two'].entries()) {
      await v1(
        bob,
        '/a2a',
        'UpdateStatus',
        { id: task.id, artifacts: [{ artifactId: 'report', name: 'report', parts: [{ text }], append: index > 0, lastChunk: index > 0 }] },
        otherEdge,
      );
    }
    await onOtherEdge(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
    const [firstRest, secondRest] = await Promise.all([first.rest(), second.rest()]);
    const firstBytes = [opened[0], ...firstRest].map((event) => event?.raw).join('\n\n');
    const secondBytes = [opened[1], ...secondRest].map((event) => event?.raw).join('\n\n');
    expect(firstBytes).toBe(secondBytes);
    expect(states(firstRest)).toEqual([
      'status:TASK_STATE_WORKING',
      'status:TASK_STATE_WORKING',
      'artifact:new:false',
      'artifact:append:true',
      'status:TASK_STATE_COMPLETED',
    ]);
    expect(firstRest[1].data.result.statusUpdate.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'on it' }] });
    expect(firstRest[3].data.result.artifactUpdate.artifact).toEqual({ artifactId: 'report', name: 'report', parts: [{ text: 'part two' }] });
    // GetTask still answers the whole artifact.
    const read = (await v1(alice, '/a2a', 'GetTask', { id: task.id })) as Json;
    expect(read.artifacts).toEqual([{ artifactId: 'report', name: 'report', parts: [{ text: 'part one, ' }, { text: 'part two' }] }]);
  });

  it('resumes with Last-Event-ID: exactly the three events missed while away, in order, then the live ones', async () => {
    const task = await newTask(alice, bob, 'reconnect');
    const before = await stream(alice, '/a2a', 'SubscribeToTask', { id: task.id }, '1.0');
    const taskEvent = (await before.next()) as SseEvent;
    expect(taskEvent.data.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    before.close();

    await onOtherEdge(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
    await onOtherEdge(bob, 'message/send', { task_id: task.id, message: { role: 'agent', parts: [{ type: 'text', text: 'first' }] } });
    await onOtherEdge(bob, 'message/send', { task_id: task.id, message: { role: 'agent', parts: [{ type: 'text', text: 'second' }] } });

    const resumed = await stream(alice, '/a2a', 'SubscribeToTask', { id: task.id }, '1.0', { lastEventId: taskEvent.id });
    const missed = [(await resumed.next()) as SseEvent, (await resumed.next()) as SseEvent, (await resumed.next()) as SseEvent];
    expect(states(missed)).toEqual(['status:TASK_STATE_WORKING', 'status:TASK_STATE_WORKING', 'status:TASK_STATE_WORKING']);
    expect(missed.slice(1).map((event) => event.data.result.statusUpdate.status.message.parts[0].text)).toEqual(['first', 'second']);
    await onOtherEdge(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
    const live = await resumed.rest();
    expect(states(live)).toEqual(['status:TASK_STATE_COMPLETED']);

    // The same resume once the task is over replays what followed and ends; its last id replays nothing.
    const afterTheEnd = await stream(alice, '/a2a', 'SubscribeToTask', { id: task.id }, '1.0', { lastEventId: missed[2].id });
    const replayed = await afterTheEnd.rest();
    expect(replayed.map((event) => event.raw)).toEqual(live.map((event) => event.raw.replace(`"id":${resumed.id}`, `"id":${afterTheEnd.id}`)));
    const nothingMore = await stream(alice, '/a2a', 'SubscribeToTask', { id: task.id }, '1.0', { lastEventId: live[0].id });
    expect(await nothingMore.rest()).toEqual([]);
  });

  it('answers an unknown Last-Event-ID with -32602 naming it', async () => {
    const task = await newTask(alice, bob, 'which id?');
    const other = await newTask(alice, bob, 'another task');
    const otherStream = await stream(alice, '/a2a', 'SubscribeToTask', { id: other.id }, '1.0');
    const otherId = ((await otherStream.next()) as SseEvent).id as string;
    otherStream.close();
    for (const lastEventId of [otherId, 'not-a-position', '99999999999']) {
      const refused = await stream(alice, '/a2a', 'SubscribeToTask', { id: task.id }, '1.0', { lastEventId });
      expect(refused.json?.error).toMatchObject({ code: -32602, message: expect.stringContaining('Last-Event-ID') });
    }
  });

  it('a subscription stays open through input-required and ends at completion (v1.0 and v0.3)', async () => {
    const task = await newTask(alice, bob, 'ask me');
    const v1Stream = await stream(alice, '/a2a', 'SubscribeToTask', { id: task.id }, '1.0');
    const v03Stream = await stream(alice, '/a2a', 'tasks/resubscribe', { id: task.id });
    await expectNext(v1Stream);
    await expectNext(v03Stream);
    await v1(
      bob,
      '/a2a',
      'UpdateStatus',
      { id: task.id, status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'which?' }] } } },
      otherEdge,
    );
    // The sender answers on the relay's own send (not a stream), and the agent completes.
    await v1(alice, '/a2a', 'SendMessage', { message: message('this one', { taskId: task.id }), configuration: { returnImmediately: true } }, otherEdge);
    await v1(bob, '/a2a', 'CompleteTask', { id: task.id }, otherEdge);
    expect(states(await v1Stream.rest())).toEqual([
      'status:TASK_STATE_WORKING',
      'status:TASK_STATE_INPUT_REQUIRED',
      'status:TASK_STATE_WORKING',
      'status:TASK_STATE_WORKING',
      'status:TASK_STATE_COMPLETED',
    ]);
    const v03 = (await v03Stream.rest()).map((event) => event.data.result as Json);
    expect(v03.map((update) => [update.status.state, update.final])).toEqual([
      ['working', false],
      ['input-required', false],
      ['working', false],
      ['working', false],
      ['completed', true],
    ]);
  });

  it('releases every subscription, listener and stream slot after 500 streams opened and aborted', async () => {
    const leaky = await RelayHarness.start({ env: { RELAY_STREAMS_PER_AGENT: '1000' } });
    try {
      const from = await registerAgent(leaky, { handle: uniqueHandle('leak-s', raw.org), name: 'Leak S' });
      const to = await registerAgent(leaky, { handle: uniqueHandle('leak-r', raw.org), name: 'Leak R' });
      const created = await openSse(
        `${leaky.url}/a2a/${to.agent.handle}`,
        { 'x-api-key': from.api_key, 'a2a-version': '1.0' },
        { jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: message('leak test'), configuration: { returnImmediately: true } } },
      );
      const taskId = (created.json?.result.task as Json).id as string;
      const feed = leaky.edge.get(TaskEventFeed);
      const metricsUrl = `${leaky.edge.get(MetricsServer).url}/metrics`;
      const measure = async (): Promise<Record<string, number>> => {
        const scrape = PrometheusScrape.parse(await (await fetch(metricsUrl)).text());
        collectGarbage();
        return {
          task_event_subscriptions: scrape.value('agentrelay_task_event_subscriptions'),
          task_event_listeners: scrape.value('agentrelay_task_event_listeners'),
          sse_streams_open: scrape.value('agentrelay_sse_streams_open'),
          heap_used_mb: Math.round(process.memoryUsage().heapUsed / 2 ** 20),
        };
      };
      const baseline = await measure();
      let peakListeners = 0;
      for (let batch = 0; batch < 10; batch++) {
        const streams = await Promise.all(
          Array.from({ length: 50 }, () =>
            openSse(
              `${leaky.url}/a2a`,
              { 'x-api-key': from.api_key, 'a2a-version': '1.0' },
              { jsonrpc: '2.0', id: 2, method: 'SubscribeToTask', params: { id: taskId } },
            ),
          ),
        );
        await Promise.all(streams.map((opened) => opened.next()));
        peakListeners = Math.max(peakListeners, feed.stats.listeners);
        for (const opened of streams) opened.close();
      }
      await eventually(async () => {
        const now = await measure();
        expect([now.task_event_subscriptions, now.task_event_listeners, now.sse_streams_open]).toEqual([0, 0, 0]);
      }, 30_000);
      const after = await measure();
      console.log(`500 streams opened and aborted (at most ${peakListeners} at once): before ${JSON.stringify(baseline)}, after ${JSON.stringify(after)}`);
      expect(peakListeners).toBeGreaterThanOrEqual(50);
      expect(after.heap_used_mb - baseline.heap_used_mb).toBeLessThan(32);
      expect(feed.stats).toEqual({ subscriptions: 0, listeners: 0 });
    } finally {
      await leaky.stop();
    }
  });
});
