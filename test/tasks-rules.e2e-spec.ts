import { RelayHarness } from './support/relay-harness';
import { registerAgent, setTrust, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { createTask, textMessage } from './support/tasks';
import { expectRpcError, ok, rpc } from './support/json-rpc';

describe('tasks in the AgentRelay dialect: error codes, transitions and idempotency', () => {
  let relay: RelayHarness;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let eve: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank', role: 'frontend' });
    eve = await registerAgent(relay, { handle: uniqueHandle('eve', 'acme'), name: 'Eve' });
  });

  afterAll(async () => {
    await relay.stop();
  });

  const expectError = async (caller: RegisteredTestAgent, method: string, params: unknown, code: number, reason: string, field?: string) => {
    const response = await rpc(relay.url, caller.api_key, method, params, { id: `err-${code}` });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ jsonrpc: '2.0', id: `err-${code}`, error: { message: expect.any(String) } });
    expectRpcError(response.body.error, { code, reason, shape: 'data', ...(field ? { field } : {}) });
    expect(response.body.result).toBeUndefined();
    return response.body.error!;
  };

  const update = (caller: RegisteredTestAgent, taskId: string, transition: string, extra: Record<string, unknown> = {}) =>
    rpc(relay.url, caller.api_key, 'tasks/update', { task_id: taskId, transition, ...extra });

  describe('message/send errors', () => {
    it('-32602 for a missing recipient on create, and for malformed params', async () => {
      await expectError(bob, 'message/send', { task_id: null, message: textMessage('hi') }, -32602, 'invalid_params', 'recipient');
      await expectError(bob, 'message/send', { recipient: frank.agent.handle, message: { parts: [] } }, -32602, 'invalid_params', 'message.parts');
      await expectError(bob, 'message/send', { recipient: frank.agent.handle, message: textMessage('x'), intent: 'shout' }, -32602, 'invalid_params', 'intent');
      await expectError(
        bob,
        'message/send',
        { recipient: frank.agent.handle, message: textMessage('x'), artifacts: [{ type: 'file_diff', path: 'a.py' }] },
        -32602,
        'invalid_params',
        'artifacts.0.diff',
      );
      await expectError(
        bob,
        'message/send',
        { recipient: frank.agent.handle, message: textMessage('x'), artifacts: [{ type: 'poem' }] },
        -32602,
        'invalid_params',
        'artifacts.0.type',
      );
      await expectError(
        bob,
        'message/send',
        { recipient: frank.agent.handle, message: textMessage('x'), artifacts: [{ type: 'link', url: 'not a url' }] },
        -32602,
        'invalid_params',
        'artifacts.0.url',
      );
    });

    it('-32602 for a handoff to yourself', async () => {
      await expectError(bob, 'message/send', { recipient: bob.agent.handle, message: textMessage('note to self') }, -32602, 'invalid_params', 'recipient');
    });

    it('-32004 for an unknown recipient', async () => {
      await expectError(bob, 'message/send', { recipient: 'nobody-here@acme', message: textMessage('hi') }, -32004, 'recipient_not_found');
    });

    it('-32012 when proposed_action does not match the intent (both ways)', async () => {
      await expectError(
        bob,
        'message/send',
        { recipient: frank.agent.handle, intent: 'propose_action', message: textMessage('x'), proposed_action: null },
        -32012,
        'invalid_intent_payload',
      );
      await expectError(
        bob,
        'message/send',
        {
          recipient: frank.agent.handle,
          intent: 'inform',
          message: textMessage('x'),
          proposed_action: { description: 'd', target_files: ['a'], rationale: 'r' },
        },
        -32012,
        'invalid_intent_payload',
      );
    });

    it('keeps a valid proposed_action and the other artifact types', async () => {
      const proposed = { description: 'Paginate /users', target_files: ['src/api/users.py'], rationale: 'Large lists time out', suggested_diff: '@@ -1 +1 @@' };
      const artifacts = [
        { type: 'file_ref', path: 'src/api/users.py', line_start: 10, line_end: 20 },
        { type: 'test_command', command: 'pytest tests/api' },
        { type: 'api_contract', name: 'users', spec: 'GET /users -> {items, next_cursor}' },
        { type: 'link', url: 'https://example.com/design', title: 'Design' },
      ];
      const taskId = await createTask(relay.url, bob, frank, 'Proposal', { intent: 'propose_action', proposed_action: proposed, artifacts });
      const task = await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
      expect(task.intent).toBe('propose_action');
      expect(task.proposed_action).toEqual(proposed);
      expect(task.artifacts).toEqual(artifacts);
    });

    it('-32013 when the recipient blocks the sender', async () => {
      const guarded = await registerAgent(relay, { handle: uniqueHandle('guarded', 'acme'), name: 'Guarded' });
      await setTrust(relay, guarded.agent.handle, { block: [bob.agent.handle] });
      await expectError(bob, 'message/send', { recipient: guarded.agent.handle, message: textMessage('let me in') }, -32013, 'teammate_blocked');
    });

    it('-32005 when appending to a thread of others, -32006 for an unknown thread', async () => {
      const taskId = await createTask(relay.url, bob, frank);
      await expectError(eve, 'message/send', { task_id: taskId, message: textMessage('me too') }, -32005, 'not_a_participant');
      await expectError(eve, 'message/send', { task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', message: textMessage('?') }, -32006, 'thread_not_found');
    });

    it('-32007 when appending to a completed or cancelled thread', async () => {
      const done = await createTask(relay.url, bob, frank);
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: done, transition: 'accept' });
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: done, transition: 'complete', result_summary: 'done' });
      await expectError(bob, 'message/send', { task_id: done, message: textMessage('one more thing') }, -32007, 'thread_terminal');
      const cancelled = await createTask(relay.url, bob, frank);
      await ok(relay.url, bob.api_key, 'tasks/cancel', { task_id: cancelled });
      await expectError(frank, 'message/send', { task_id: cancelled, message: textMessage('too late') }, -32007, 'thread_terminal');
    });
  });

  describe('idempotency', () => {
    it('returns the original result for the same key and payload, -32011 for a different payload', async () => {
      const params = {
        task_id: null,
        recipient: frank.agent.handle,
        intent: 'inform',
        message: textMessage('Idempotent hello'),
        metadata: { client_idempotency_key: `key-${Date.now()}` },
      };
      const first = await ok(relay.url, bob.api_key, 'message/send', params);
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: first.task_id, transition: 'accept' });
      const retry = await ok(relay.url, bob.api_key, 'message/send', params);
      expect(retry).toEqual(first);
      const sent = await ok(relay.url, bob.api_key, 'tasks/list', { filter: { role: 'sender' }, page: { limit: 200 } });
      expect(sent.items.filter((item: { summary_preview: string }) => item.summary_preview === 'Idempotent hello')).toHaveLength(1);
      await expectError(bob, 'message/send', { ...params, message: textMessage('Something else') }, -32011, 'duplicate_idempotency_key');

      const appendParams = { task_id: first.task_id, message: textMessage('follow-up'), metadata: { client_idempotency_key: `append-${Date.now()}` } };
      const appended = await ok(relay.url, bob.api_key, 'message/send', appendParams);
      const again = await ok(relay.url, bob.api_key, 'message/send', appendParams);
      expect(again).toEqual(appended);
      const task = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: first.task_id });
      expect(task.messages.map((message: { sequence_no: number }) => message.sequence_no)).toEqual([1, 2]);
      await expectError(bob, 'message/send', { ...appendParams, message: textMessage('changed') }, -32011, 'duplicate_idempotency_key');
    });

    it('keeps a client message id as the message id and replays on it', async () => {
      const taskId = await createTask(relay.url, bob, frank);
      const params = { task_id: taskId, message: { role: 'user', message_id: `msg-${Date.now()}`, parts: [{ type: 'text', text: 'with my id' }] } };
      const appended = await ok(relay.url, bob.api_key, 'message/send', params);
      expect(appended.message_id).toBe(params.message.message_id);
      expect(await ok(relay.url, bob.api_key, 'message/send', params)).toEqual(appended);
    });
  });

  describe('tasks/get errors', () => {
    it('-32006 for an unknown thread, -32005 for a thread of others', async () => {
      const taskId = await createTask(relay.url, bob, frank);
      await expectError(eve, 'tasks/get', { task_id: taskId }, -32005, 'not_a_participant');
      await expectError(eve, 'tasks/get', { task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' }, -32006, 'thread_not_found');
      await expectError(eve, 'tasks/get', { task_id: 42 }, -32602, 'invalid_params', 'task_id');
    });
  });

  describe('transitions', () => {
    it('runs every allowed transition with its timestamps', async () => {
      const declined = await createTask(relay.url, bob, frank);
      const decline = await update(frank, declined, 'decline', { reason: 'not my area' });
      expect(decline.body.result).toMatchObject({ status: { state: 'rejected' }, rejected_at: expect.any(String) });
      expect((await ok(relay.url, bob.api_key, 'tasks/get', { task_id: declined })).reason).toBe('not my area');

      const failed = await createTask(relay.url, bob, frank);
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: failed, transition: 'accept' });
      expect((await update(frank, failed, 'fail', { reason: 'tests broke' })).body.result).toMatchObject({
        status: { state: 'failed' },
        failed_at: expect.any(String),
      });

      const cancelled = await createTask(relay.url, bob, frank);
      expect((await update(bob, cancelled, 'cancel')).body.result).toMatchObject({
        status: { state: 'cancelled' },
        cancelled_at: expect.any(String),
        accepted_at: null,
      });
      const aliased = await createTask(relay.url, bob, frank);
      const cancel = await ok(relay.url, bob.api_key, 'tasks/cancel', { task_id: aliased });
      expect(cancel).toEqual({ task_id: aliased, status: { state: 'cancelled' }, updated_at: expect.any(String) });
    });

    it('request_input asks a question; the sender answer moves the thread back to accepted; complete works from input_required', async () => {
      const taskId = await createTask(relay.url, bob, frank);
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept', session_id: 's-1' });
      const asked = await update(frank, taskId, 'request_input', { message: textMessage('Which endpoint first?') });
      expect(asked.body.result).toMatchObject({ status: { state: 'input_required' } });
      const task = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
      expect(task.messages[1]).toMatchObject({ sequence_no: 2, from: frank.agent.handle, body: 'Which endpoint first?' });
      await expectError(frank, 'tasks/update', { task_id: taskId, transition: 'request_input' }, -32602, 'invalid_params', 'message');
      await ok(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: textMessage('/users first') });
      expect((await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId })).status).toEqual({ state: 'accepted' });
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'request_input', message: textMessage('And then?') });
      const done = await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'All done' });
      expect(done.status).toEqual({ state: 'completed' });
      expect((await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId })).result_summary).toBe('All done');
    });

    it('refuses transitions from the wrong state with -32008', async () => {
      const pending = await createTask(relay.url, bob, frank);
      await expectError(frank, 'tasks/update', { task_id: pending, transition: 'complete' }, -32008, 'invalid_transition');
      await expectError(frank, 'tasks/update', { task_id: pending, transition: 'fail' }, -32008, 'invalid_transition');
      await expectError(frank, 'tasks/update', { task_id: pending, transition: 'request_input', message: textMessage('?') }, -32008, 'invalid_transition');
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: pending, transition: 'accept' });
      await expectError(frank, 'tasks/update', { task_id: pending, transition: 'accept' }, -32008, 'invalid_transition');
      await expectError(frank, 'tasks/update', { task_id: pending, transition: 'decline' }, -32008, 'invalid_transition');
      await expectError(bob, 'tasks/update', { task_id: pending, transition: 'cancel' }, -32008, 'invalid_transition');
      await expectError(bob, 'tasks/cancel', { task_id: pending }, -32008, 'invalid_transition');
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: pending, transition: 'complete' });
      for (const transition of ['accept', 'complete', 'decline', 'fail']) {
        await expectError(frank, 'tasks/update', { task_id: pending, transition }, -32008, 'invalid_transition');
      }
      await expectError(bob, 'tasks/cancel', { task_id: pending }, -32008, 'invalid_transition');
    });

    it('refuses the wrong party with -32009, and strangers with -32005', async () => {
      const taskId = await createTask(relay.url, bob, frank);
      await expectError(bob, 'tasks/update', { task_id: taskId, transition: 'accept' }, -32009, 'not_authorized_transition');
      await expectError(bob, 'tasks/update', { task_id: taskId, transition: 'decline' }, -32009, 'not_authorized_transition');
      await expectError(frank, 'tasks/update', { task_id: taskId, transition: 'cancel' }, -32009, 'not_authorized_transition');
      await expectError(frank, 'tasks/cancel', { task_id: taskId }, -32009, 'not_authorized_transition');
      await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
      await expectError(bob, 'tasks/update', { task_id: taskId, transition: 'complete' }, -32009, 'not_authorized_transition');
      await expectError(bob, 'tasks/update', { task_id: taskId, transition: 'fail' }, -32009, 'not_authorized_transition');
      await expectError(bob, 'tasks/update', { task_id: taskId, transition: 'request_input', message: textMessage('?') }, -32009, 'not_authorized_transition');
      await expectError(eve, 'tasks/update', { task_id: taskId, transition: 'complete' }, -32005, 'not_a_participant');
      await expectError(eve, 'tasks/update', { task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', transition: 'accept' }, -32006, 'thread_not_found');
    });
  });
});
