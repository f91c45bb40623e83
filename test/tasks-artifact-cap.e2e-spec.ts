import { TASK_LIMITS } from '@app/contracts';
import { RelayHarness } from './support/relay-harness';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { createTask, textMessage } from './support/tasks';
import { expectRpcError, ok, rpc, type Json } from './support/json-rpc';

/** A typed artifact of about 300 KB: a diff and its description. */
function bigDiff(label: string): Json {
  return { type: 'file_diff', path: `src/${label}.ts`, diff: `+${label}\n`.padEnd(200_000, 'd'), description: 'x'.repeat(100_000) };
}

function smallLink(index: number): Json {
  return { type: 'link', url: `https://example.com/${index}`, title: `link ${index}` };
}

describe('artifact caps per thread', () => {
  let relay: RelayHarness;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank', role: 'frontend' });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('refuses appends past the bytes cap naming it, and the thread stays readable, listable and changeable', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Big diffs follow.');
    const first = await rpc(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: textMessage('diff 1'), artifacts: [bigDiff('one')] });
    expect({ status: first.status, error: first.body.error }).toEqual({ status: 200, error: undefined });
    for (const label of ['two', 'three', 'four']) {
      const refused = await rpc(relay.url, bob.api_key, 'message/send', {
        task_id: taskId,
        message: textMessage(`diff ${label}`),
        artifacts: [bigDiff(label)],
      });
      expectRpcError(refused.body.error, { code: -32602, reason: 'invalid_params', field: 'artifacts' });
      expect(refused.body.error?.data).toMatchObject({ limit: 'artifact_bytes_per_thread', max: TASK_LIMITS.artifactBytesPerTask });
      expect(refused.body.error?.message).toContain(`${TASK_LIMITS.artifactBytesPerTask} bytes`);
    }

    const task = await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    expect(task.artifacts.map((artifact: Json) => artifact.path)).toEqual(['src/one.ts']);
    // The refused sends wrote nothing, not even their messages.
    expect(task.messages.map((message: Json) => message.body)).toEqual(['Big diffs follow.', 'diff 1']);
    const inbox = await ok(relay.url, frank.api_key, 'tasks/list', { filter: { role: 'recipient' } });
    expect(inbox.items.map((item: Json) => item.task_id)).toContain(taskId);
    const accepted = await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    expect(accepted.status.state).toBe('accepted');
  }, 120000);

  it('refuses artifacts past the count cap naming it', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Many links follow.');
    const batch = (from: number): Json[] => Array.from({ length: TASK_LIMITS.artifactsPerRequest }, (_, index) => smallLink(from + index));
    for (let from = 0; from < TASK_LIMITS.artifactsPerTask; from += TASK_LIMITS.artifactsPerRequest) {
      await ok(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: textMessage(`links from ${from}`), artifacts: batch(from) });
    }
    const refused = await rpc(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: textMessage('one more'), artifacts: [smallLink(1000)] });
    expectRpcError(refused.body.error, { code: -32602, reason: 'invalid_params', field: 'artifacts' });
    expect(refused.body.error?.data).toMatchObject({ limit: 'artifacts_per_thread', max: TASK_LIMITS.artifactsPerTask });
    const task = await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    expect(task.artifacts).toHaveLength(TASK_LIMITS.artifactsPerTask);
  }, 120000);

  it('refuses a create whose artifacts exceed the bytes cap, creating nothing', async () => {
    const ann = await registerAgent(relay, { handle: uniqueHandle('ann', 'acme'), name: 'Ann' });
    const refused = await rpc(relay.url, ann.api_key, 'message/send', {
      recipient: frank.agent.handle,
      message: textMessage('Two big diffs at once.'),
      artifacts: [bigDiff('a'), bigDiff('b')],
      metadata: { client_idempotency_key: 'two-big-diffs' },
    });
    expectRpcError(refused.body.error, { code: -32602, reason: 'invalid_params', field: 'artifacts' });
    expect(refused.body.error?.data).toMatchObject({ limit: 'artifact_bytes_per_thread' });
    const sent = await ok(relay.url, ann.api_key, 'tasks/list', { filter: { role: 'sender' } });
    expect(sent.items).toEqual([]);
    // The key was not spent: the same key with one diff creates the thread.
    const created = await ok(relay.url, ann.api_key, 'message/send', {
      recipient: frank.agent.handle,
      message: textMessage('One big diff.'),
      artifacts: [bigDiff('a')],
      metadata: { client_idempotency_key: 'two-big-diffs' },
    });
    expect(created.status.state).toBe('pending');
  }, 120000);
});
