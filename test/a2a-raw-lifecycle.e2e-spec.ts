import { randomUUID } from 'node:crypto';
import { A2aRawClient, message } from './support/a2a-raw';
import { EventCollector } from './support/event-collector';
import { eventually } from './support/eventually';
import type { RegisteredTestAgent } from './support/agents';
import type { Json } from './support/json-rpc';
import type { RelayHarness } from './support/relay-harness';

/**
 * Raw JSON-RPC against the standard A2A surface, the lifecycle family: CancelTask, and the
 * agent-side CompleteTask and UpdateStatus.
 */
describe('A2A JSON-RPC, raw', () => {
  const raw = new A2aRawClient();
  const { call, v1, v1Error, newTask, agentRelay, getTask, agent } = raw;
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await raw.start();
    alice = await agent('alice');
    bob = await agent('bob');
  });

  afterAll(async () => {
    await raw.stop();
  });

  describe('cancel', () => {
    it('lets the creator cancel while submitted, working or input-required, never the recipient', async () => {
      const submitted = await newTask(alice, bob, 'c1');
      expect((await v1(alice, '/a2a', 'CancelTask', { id: submitted.id })).status.state).toBe('TASK_STATE_CANCELED');

      const working = await newTask(alice, bob, 'c2');
      await agentRelay(bob, 'tasks/update', { task_id: working.id, transition: 'accept' });
      const byRecipient = await v1Error(bob, '/a2a', 'CancelTask', { id: working.id });
      expect(byRecipient.code).toBe(-32002);
      expect((await getTask(alice, working.id)).status.state).toBe('TASK_STATE_WORKING');
      const agentRelayCancel = await call(alice, '/a2a', 'tasks/cancel', { task_id: working.id });
      expect(agentRelayCancel.body.error.code).toBe(-32008);
      expect((await v1(alice, '/a2a', 'CancelTask', { id: working.id })).status.state).toBe('TASK_STATE_CANCELED');

      const waiting = await newTask(alice, bob, 'c3');
      await v1(bob, '/a2a', 'UpdateStatus', {
        id: waiting.id,
        status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text: 'Which DB?' }] } },
      });
      expect((await v1(alice, '/a2a', 'CancelTask', { id: waiting.id })).status.state).toBe('TASK_STATE_CANCELED');

      for (const id of [submitted.id, working.id, waiting.id]) expect((await v1Error(alice, '/a2a', 'CancelTask', { id })).code).toBe(-32002);
      const legacy = await call(alice, '/a2a', 'tasks/cancel', { id: submitted.id });
      expect(legacy.body.error.code).toBe(-32002);
    });

    it('tells the worker: a canceled event for the task, once', async () => {
      const collector = await EventCollector.start(relay.subjectPrefix);
      try {
        const task = await newTask(alice, bob, 'cancel after accept');
        await agentRelay(bob, 'tasks/update', { task_id: task.id, transition: 'accept' });
        await v1(alice, `/a2a/${bob.agent.handle}`, 'CancelTask', { id: task.id });
        const canceled = await eventually(() => {
          const events = collector.ofTask(task.id).filter((collected) => collected.event.type === 'canceled');
          expect(events).toHaveLength(1);
          return events[0];
        });
        expect(canceled.subject).toBe(`${relay.subjectPrefix}.relay.events.task.canceled`);
        expect(canceled.event).toMatchObject({ state: 'cancelled', sender: alice.agent.handle, recipient: bob.agent.handle });
      } finally {
        await collector.stop();
      }
    });

    it('answers -32004 to a message for a terminal task', async () => {
      const task = await newTask(alice, bob, 'to be closed');
      await v1(alice, '/a2a', 'CancelTask', { id: task.id });
      const error = await v1Error(alice, '/a2a', 'SendMessage', { message: message('hello?', { taskId: task.id }) });
      expect(error.code).toBe(-32004);
    });
  });

  describe('agent-side methods', () => {
    it('drives a task with UpdateStatus and CompleteTask, artifacts exactly as given in both versions', async () => {
      const task = await newTask(alice, bob, 'build the report');
      const path = `/a2a/${alice.agent.handle}`;
      await v1(bob, path, 'UpdateStatus', {
        id: task.id,
        status: { state: 'TASK_STATE_WORKING' },
        artifacts: [{ artifactId: 'log', name: 'log', parts: [{ text: 'line 1\n' }], lastChunk: false }],
      });
      await v1(bob, path, 'tasks/updateStatus', {
        id: task.id,
        artifacts: [{ artifact: { artifactId: 'log', parts: [{ text: 'line 2\n' }] }, append: true, lastChunk: true }],
      });
      const completed = await v1(bob, path, 'CompleteTask', {
        id: task.id,
        artifacts: [
          {
            artifactId: 'report',
            name: 'report',
            description: 'The report',
            parts: [
              { text: 'summary', mediaType: 'text/markdown' },
              { raw: 'aGVsbG8=', filename: 'r.bin', mediaType: 'application/octet-stream' },
              { url: 'https://example.com/r.pdf', filename: 'r.pdf' },
              { data: { rows: 3 }, mediaType: 'application/json' },
            ],
            metadata: { generator: 'ci' },
          },
        ],
      });
      expect(completed.status.state).toBe('TASK_STATE_COMPLETED');

      const read = await getTask(alice, task.id);
      expect(read.artifacts).toEqual([
        { artifactId: 'log', name: 'log', parts: [{ text: 'line 1\n' }, { text: 'line 2\n' }] },
        {
          artifactId: 'report',
          name: 'report',
          description: 'The report',
          parts: [
            { text: 'summary', mediaType: 'text/markdown' },
            { raw: 'aGVsbG8=', filename: 'r.bin', mediaType: 'application/octet-stream' },
            { url: 'https://example.com/r.pdf', filename: 'r.pdf' },
            { data: { rows: 3 }, mediaType: 'application/json' },
          ],
          metadata: { generator: 'ci' },
        },
      ]);
      const legacy = await call(alice, '/a2a', 'tasks/get', { id: task.id });
      expect(legacy.body.result.status.state).toBe('completed');
      expect(legacy.body.result.artifacts[1].parts).toEqual([
        { kind: 'text', text: 'summary' },
        { kind: 'file', file: { bytes: 'aGVsbG8=', name: 'r.bin', mimeType: 'application/octet-stream' } },
        { kind: 'file', file: { uri: 'https://example.com/r.pdf', name: 'r.pdf' } },
        { kind: 'data', data: { rows: 3 } },
      ]);
    });

    it('maps the reported failed and rejected states to fail and decline', async () => {
      const failing = await newTask(alice, bob, 'will fail');
      await v1(bob, '/a2a', 'UpdateStatus', { id: failing.id, status: { state: 'TASK_STATE_WORKING' } });
      const failed = await v1(bob, '/a2a', 'UpdateStatus', { id: failing.id, status: { state: 'TASK_STATE_FAILED', message: 'The build broke' } });
      expect(failed.status).toMatchObject({ state: 'TASK_STATE_FAILED', message: { role: 'ROLE_AGENT', parts: [{ text: 'The build broke' }] } });

      const declining = await newTask(alice, bob, 'will be rejected');
      const rejected = await call(bob, '/a2a', 'tasks/updateStatus', {
        id: declining.id,
        status: { state: 'rejected', message: { kind: 'message', messageId: randomUUID(), role: 'agent', parts: [{ kind: 'text', text: 'Not my area' }] } },
      });
      expect(rejected.body.result.status).toMatchObject({ state: 'rejected', message: { kind: 'message', role: 'agent' } });
      expect((await getTask(alice, declining.id)).status.state).toBe('TASK_STATE_REJECTED');
    });

    it('carries message metadata as the thread message payload, both ways', async () => {
      const task = await newTask(alice, bob, 'with metadata', { metadata: { ticket: 'OPS-1', nested: { snake_key: true } } });
      expect(task.history[0].metadata).toEqual({ ticket: 'OPS-1', nested: { snake_key: true } });
      const thread = await agentRelay(bob, 'tasks/get', { task_id: task.id });
      expect((thread.messages as Json[])[0].payload).toEqual({ ticket: 'OPS-1', nested: { snake_key: true } });
      await v1(bob, `/a2a/${alice.agent.handle}`, 'SendMessage', {
        message: message('ack', { taskId: task.id, metadata: { seen: 1 } }),
        configuration: { returnImmediately: true },
      });
      const read = await getTask(alice, task.id);
      expect(read.history[1]).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'ack' }], metadata: { seen: 1 } });
      const seenByAlice = await agentRelay(alice, 'tasks/get', { task_id: task.id });
      expect((seenByAlice.messages as Json[])[1]).toMatchObject({ from: bob.agent.handle, body: 'ack', payload: { seen: 1 } });
    });

    it('does not let the sender complete its own task', async () => {
      const task = await newTask(alice, bob, 'not yours to finish');
      const error = await v1Error(alice, '/a2a', 'CompleteTask', { id: task.id });
      expect(error.code).toBe(-32004);
      expect((await getTask(alice, task.id)).status.state).toBe('TASK_STATE_SUBMITTED');
    });

    it('renders typed AgentRelay artifacts as data parts, with the relay metadata', async () => {
      const created = await agentRelay(alice, 'message/send', {
        recipient: bob.agent.handle,
        intent: 'ask_question',
        message: { role: 'user', parts: [{ type: 'text', text: 'typed' }] },
        artifacts: [{ type: 'link', url: 'https://example.com/pr/1', title: 'PR' }],
      });
      const task = await getTask(alice, created.task_id as string);
      expect(task.metadata.relay).toMatchObject({ intent: 'ask_question', proposedAction: null, sender: alice.agent.handle, recipient: bob.agent.handle });
      expect(task.artifacts[0].parts[0].data).toMatchObject({ type: 'link', url: 'https://example.com/pr/1' });
    });
  });
});
