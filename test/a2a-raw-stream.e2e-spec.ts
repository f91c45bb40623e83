import { randomUUID } from 'node:crypto';
import { A2aRawClient, expectNext, message } from './support/a2a-raw';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import type { Json } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { openSse } from './support/sse';
import { TaskEventFeed } from '../apps/edge/src/streams/task-event-feed';

/**
 * Raw JSON-RPC against the standard A2A surface, the streaming family: SendStreamingMessage,
 * message/stream, SubscribeToTask and tasks/resubscribe over SSE.
 */
describe('A2A JSON-RPC, raw', () => {
  const raw = new A2aRawClient();
  const { v1, newTask, agentRelay, agent, stream, nextId } = raw;
  let relay: RelayHarness;
  const org = raw.org;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await raw.start();
    alice = await agent('alice');
    bob = await agent('bob');
    carol = await agent('carol');
  });

  afterAll(async () => {
    await raw.stop();
  });

  describe('streaming over SSE', () => {
    it('SendStreamingMessage (v1.0): the Task, then a status update per change and artifact updates, closed once terminal', async () => {
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('stream me') }, '1.0');
      expect(events.status).toBe(200);
      expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect(events.headers.get('cache-control')).toBe('no-cache');
      expect(events.headers.get('x-accel-buffering')).toBe('no');
      expect(events.headers.get('x-ratelimit-limit')).not.toBeNull();
      const first = await expectNext(events);
      expect(first.task).toMatchObject({ status: { state: 'TASK_STATE_SUBMITTED' }, history: [{ role: 'ROLE_USER', parts: [{ text: 'stream me' }] }] });
      const task = first.task as Json;

      await v1(bob, `/a2a/${alice.agent.handle}`, 'UpdateStatus', { id: task.id, status: { state: 'TASK_STATE_WORKING' } });
      expect(await expectNext(events)).toEqual({
        statusUpdate: {
          taskId: task.id,
          contextId: task.contextId,
          status: { state: 'TASK_STATE_WORKING', timestamp: expect.any(String) },
        },
      });

      await v1(bob, `/a2a/${alice.agent.handle}`, 'CompleteTask', {
        id: task.id,
        message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'done' }] },
        artifacts: [{ artifactId: 'out', name: 'out', parts: [{ text: 'result' }] }],
      });
      const rest = await events.rest();
      expect(rest.map((event) => event.event)).toEqual([undefined, undefined]);
      expect(rest[0].data.result).toEqual({
        artifactUpdate: {
          taskId: task.id,
          contextId: task.contextId,
          artifact: { artifactId: 'out', name: 'out', parts: [{ text: 'result' }] },
          lastChunk: true,
        },
      });
      expect(rest[1].data.result.statusUpdate).toMatchObject({
        taskId: task.id,
        status: { state: 'TASK_STATE_COMPLETED', message: { role: 'ROLE_AGENT', parts: [{ text: 'done' }] } },
      });
      expect(rest[1].data.result.statusUpdate).not.toHaveProperty('final');
    });

    it('message/stream (v0.3): kind-tagged events, final: true on the terminal update', async () => {
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'message/stream', {
        message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'v0.3 stream' }] },
      });
      const task = await expectNext(events);
      expect(task).toMatchObject({
        kind: 'task',
        status: { state: 'submitted' },
        history: [{ kind: 'message', parts: [{ kind: 'text', text: 'v0.3 stream' }] }],
      });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
      expect(await expectNext(events)).toMatchObject({
        kind: 'status-update',
        taskId: task.id,
        contextId: task.contextId,
        status: { state: 'working' },
        final: false,
      });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
      const rest = await events.rest();
      expect(rest.map((event) => event.data.result)).toEqual([
        expect.objectContaining({ kind: 'status-update', status: expect.objectContaining({ state: 'completed' }), final: true }),
      ]);
    });

    it('closes the stream when the task asks for input', async () => {
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('ask me') }, '1.0');
      const task = (await expectNext(events)).task as Json;
      await v1(bob, `/a2a/${alice.agent.handle}`, 'UpdateStatus', {
        id: task.id,
        status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'which one?' }] } },
      });
      // Accepted on the way (the agent reported input-required on a submitted task), then input-required, then closed.
      const rest = await events.rest();
      expect(rest.map((event) => event.data.result.statusUpdate?.status.state).at(-1)).toBe('TASK_STATE_INPUT_REQUIRED');
      expect(rest.at(-1)?.data.result.statusUpdate.status.message).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'which one?' }] });

      // The answer continues the task on a new stream, which follows it to completion.
      const answer = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('the second', { taskId: task.id }) }, '1.0');
      expect(((await expectNext(answer)).task as Json).status.state).toBe('TASK_STATE_WORKING');
      await v1(bob, `/a2a/${alice.agent.handle}`, 'CompleteTask', { id: task.id });
      expect((await answer.rest()).map((event) => event.data.result.statusUpdate?.status.state)).toEqual(['TASK_STATE_COMPLETED']);
    });

    it('SubscribeToTask and tasks/resubscribe start from the current Task and follow it', async () => {
      const task = await newTask(alice, bob, 'follow me');
      const v1Events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SubscribeToTask', { id: task.id }, '1.0');
      expect((await expectNext(v1Events)).task as Json).toMatchObject({ id: task.id, status: { state: 'TASK_STATE_SUBMITTED' } });
      const legacy = await stream(bob, '/a2a', 'tasks/resubscribe', { id: task.id });
      expect(await expectNext(legacy)).toMatchObject({ kind: 'task', id: task.id, status: { state: 'submitted' } });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
      await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'complete' });
      const v1States = (await v1Events.rest()).map((event) => event.data.result.statusUpdate.status.state);
      expect(v1States.at(-1)).toBe('TASK_STATE_COMPLETED');
      expect(v1States.every((state, index) => index === 0 || state !== v1States[index - 1])).toBe(true);
      const legacyUpdates = (await legacy.rest()).map((event) => event.data.result);
      expect(legacyUpdates.at(-1)).toMatchObject({ kind: 'status-update', status: { state: 'completed' }, final: true });
      expect(legacyUpdates.slice(0, -1).every((update) => update.final === false)).toBe(true);
    });

    it("answers resubscribe on a terminal task with -32004 and on another pair's task with -32001: plain JSON in v1.0, one error event in v0.3", async () => {
      const task = await newTask(alice, bob, 'soon over');
      await v1(alice, '/a2a', 'CancelTask', { id: task.id });
      const terminal = await stream(alice, `/a2a/${bob.agent.handle}`, 'SubscribeToTask', { id: task.id }, '1.0');
      expect(terminal.headers.get('content-type')).toMatch(/^application\/json/);
      expect(terminal.json?.error.code).toBe(-32004);
      // v0.3 clients read only an event stream here: the error is its one event.
      const legacyTerminal = await stream(alice, '/a2a', 'tasks/resubscribe', { id: task.id });
      expect(legacyTerminal.status).toBe(200);
      expect(legacyTerminal.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const legacyEvents = await legacyTerminal.rest();
      expect(legacyEvents).toHaveLength(1);
      expect(legacyEvents[0]).toMatchObject({ event: 'error', data: { jsonrpc: '2.0', id: legacyTerminal.id, error: { code: -32004 } } });

      const open = await newTask(alice, bob, 'not yours');
      for (const [path, method, version] of [
        [`/a2a/${bob.agent.handle}`, 'SubscribeToTask', '1.0'],
        ['/a2a', 'SubscribeToTask', '1.0'],
        ['/a2a', 'tasks/resubscribe', undefined],
      ] as const) {
        const foreign = await stream(carol, path, method, { id: open.id }, version);
        const error = foreign.json?.error ?? (await foreign.rest())[0]?.data.error;
        expect([method, error?.code]).toEqual([method, -32001]);
      }
    });

    it('answers an invalid streaming send with a plain JSON-RPC error', async () => {
      const invalid = await stream(alice, '/a2a', 'SendStreamingMessage', { message: message('to whom?') }, '1.0');
      expect(invalid.status).toBe(200);
      expect(invalid.json?.error.code).toBe(-32602);
    });

    it('closes a stream after RELAY_STREAM_MAX_MS even when the task has not settled', async () => {
      const bounded = await RelayHarness.start({ env: { RELAY_STREAM_MAX_MS: '1000' } });
      try {
        const from = await registerAgent(bounded, { handle: uniqueHandle('dora', org), name: 'Dora' });
        const to = await registerAgent(bounded, { handle: uniqueHandle('eve', org), name: 'Eve' });
        const startedAt = Date.now();
        const id = nextId();
        const events = await openSse(
          `${bounded.url}/a2a/${to.agent.handle}`,
          { 'x-api-key': from.api_key, 'a2a-version': '1.0' },
          { jsonrpc: '2.0', id, method: 'SendStreamingMessage', params: { message: message('never done') } },
        );
        const rest = await events.rest();
        expect(rest.map((event) => event.data.result.task?.status.state)).toEqual(['TASK_STATE_SUBMITTED']);
        expect(Date.now() - startedAt).toBeGreaterThanOrEqual(900);
      } finally {
        await bounded.stop();
      }
    });

    it('stops following the task when the client hangs up', async () => {
      const feed = relay.edge.get(TaskEventFeed);
      const before = feed.stats.listeners;
      const events = await stream(alice, `/a2a/${bob.agent.handle}`, 'SendStreamingMessage', { message: message('hang up') }, '1.0');
      await expectNext(events);
      expect(feed.stats.listeners).toBe(before + 1);
      events.close();
      await eventually(() => expect(feed.stats.listeners).toBe(before));
    });
  });
});
