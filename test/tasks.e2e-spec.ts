import { RelayHarness } from './support/relay-harness';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, ok, rpc } from './support/json-rpc';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('tasks in the AgentRelay dialect on POST /a2a', () => {
  let relay: RelayHarness;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank', role: 'frontend' });
  });

  afterAll(async () => {
    await relay.stop();
  });

  it('creates, reads, lists, accepts and completes a handoff (the seed examples)', async () => {
    const created = await rpc(
      relay.url,
      bob.api_key,
      'message/send',
      {
        task_id: null,
        recipient: frank.agent.handle,
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'Refactored /users API. New shape: paginated with { items, next_cursor }.' }] },
        artifacts: [{ type: 'file_diff', path: 'src/api/users.py', diff: '@@ -1,5 +1,8 @@\n...' }],
        proposed_action: null,
        metadata: { client_idempotency_key: '550e8400-e29b-41d4-a716-446655440000' },
      },
      { id: 'req-1' },
    );
    expect(created.status).toBe(200);
    expect(created.body).toEqual({
      jsonrpc: '2.0',
      id: 'req-1',
      result: { task_id: expect.stringMatching(ULID), status: { state: 'pending' }, created_at: expect.stringMatching(ISO) },
    });
    const taskId = created.body.result!.task_id as string;

    const inbox = await ok(relay.url, frank.api_key, 'tasks/list', {
      filter: { role: 'recipient', status: ['pending'], since: '2026-04-20T00:00:00Z' },
      page: { limit: 50, cursor: null },
    });
    expect(inbox).toEqual({
      items: [
        {
          thread_id: taskId,
          task_id: taskId,
          status: { state: 'pending' },
          sender: { handle: bob.agent.handle, name: 'Bob', role: 'backend' },
          summary_preview: 'Refactored /users API. New shape: paginated with { items, next_cursor }.',
          intent: 'inform',
          recipient: frank.agent.handle,
          unread_messages: 1,
          created_at: expect.stringMatching(ISO),
          updated_at: expect.stringMatching(ISO),
        },
      ],
      next_cursor: null,
    });

    const accepted = await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept', session_id: 'claude-1234' });
    expect(accepted).toEqual({
      thread_id: taskId,
      task_id: taskId,
      status: { state: 'accepted' },
      accepted_at: expect.stringMatching(ISO),
      completed_at: null,
      cancelled_at: null,
      updated_at: expect.stringMatching(ISO),
    });

    const task = await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    expect(task).toMatchObject({
      thread_id: taskId,
      task_id: taskId,
      status: { state: 'accepted' },
      sender: { handle: bob.agent.handle, name: 'Bob', role: 'backend' },
      recipient_id: frank.agent.id,
      summary: 'Refactored /users API. New shape: paginated with { items, next_cursor }.',
      intent: 'inform',
      artifacts: [{ type: 'file_diff', path: 'src/api/users.py', diff: '@@ -1,5 +1,8 @@\n...' }],
      proposed_action: null,
      messages: [
        {
          id: expect.any(String),
          sequence_no: 1,
          from: bob.agent.handle,
          body: 'Refactored /users API. New shape: paginated with { items, next_cursor }.',
          payload: {},
          created_at: expect.stringMatching(ISO),
        },
      ],
      accepted_at: expect.stringMatching(ISO),
      completed_at: null,
      cancelled_at: null,
      created_at: expect.stringMatching(ISO),
    });
    expect(Object.keys(task.messages[0]).sort()).toEqual(['body', 'created_at', 'from', 'id', 'payload', 'sequence_no']);

    const appended = await rpc(
      relay.url,
      frank.api_key,
      'message/send',
      {
        task_id: taskId,
        message: { role: 'user', parts: [{ type: 'text', text: "What's the expected shape for the /search endpoint?" }] },
        metadata: { client_idempotency_key: '660f9500-f39c-52e5-b827-557766551111' },
      },
      { id: 'req-2' },
    );
    expect(appended.body).toEqual({
      jsonrpc: '2.0',
      id: 'req-2',
      result: { task_id: taskId, thread_id: taskId, message_id: expect.any(String), sequence_no: 2, created_at: expect.stringMatching(ISO) },
    });

    const completed = await ok(relay.url, frank.api_key, 'tasks/update', {
      task_id: taskId,
      transition: 'complete',
      result_summary: 'Updated API client to handle paginated response; all tests pass.',
    });
    expect(completed).toMatchObject({ status: { state: 'completed' }, completed_at: expect.stringMatching(ISO), cancelled_at: null });

    const sent = await ok(relay.url, bob.api_key, 'tasks/list', { filter: { role: 'sender' } });
    expect(sent.items).toEqual([expect.objectContaining({ task_id: taskId, status: { state: 'completed' }, unread_messages: 1 })]);
  });

  it("answers AgentRelay calls on POST /a2a/{handle}: the handle is the recipient and only the pair's threads exist", async () => {
    const path = `/a2a/${frank.agent.handle}`;
    const created = await rpc(
      relay.url,
      bob.api_key,
      'message/send',
      { task_id: null, message: { role: 'user', parts: [{ type: 'text', text: 'via the endpoint' }] } },
      { path },
    );
    expect(created.body.result).toEqual({ task_id: expect.stringMatching(ULID), status: { state: 'pending' }, created_at: expect.stringMatching(ISO) });
    const taskId = created.body.result!.task_id as string;
    const listed = await rpc(relay.url, bob.api_key, 'tasks/list', { filter: { role: 'sender' } }, { path });
    expect(listed.body.result!.items.map((item: { task_id: string }) => item.task_id)).toContain(taskId);

    const eve = await registerAgent(relay, { handle: uniqueHandle('eve', 'acme'), name: 'Eve' });
    const elsewhere = await rpc(relay.url, bob.api_key, 'tasks/get', { task_id: taskId }, { path: `/a2a/${eve.agent.handle}` });
    expect(elsewhere.body.error).toMatchObject({ code: -32006, data: { reason: 'thread_not_found' } });
    const otherList = await rpc(relay.url, bob.api_key, 'tasks/list', { filter: { role: 'sender' } }, { path: `/a2a/${eve.agent.handle}` });
    expect(otherList.body.result).toEqual({ items: [], next_cursor: null });
    const mismatch = await rpc(
      relay.url,
      bob.api_key,
      'message/send',
      { recipient: eve.agent.handle, message: { parts: [{ type: 'text', text: 'x' }] } },
      { path },
    );
    expectRpcError(mismatch.body.error, { code: -32602, field: 'recipient' });
    const got = await rpc(relay.url, frank.api_key, 'tasks/get', { task_id: taskId }, { path: `/a2a/${bob.agent.handle}/` });
    expect(got.body.result).toMatchObject({ task_id: taskId, summary: 'via the endpoint' });
  });
});
