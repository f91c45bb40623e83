import request from 'supertest';
import { TaskState, type Task } from '@a2a-js/sdk';
import { type Client } from '@a2a-js/sdk/client';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

/** How long the follower waits on the slow upstream's `GetTask` before giving up on it (the agent's own timeout, the most allowed). */
const SLOW_TIMEOUT_MS = 30_000;

async function send(client: Client, text: string): Promise<Task> {
  return (await client.sendMessage({
    tenant: '',
    message: userMessage(text),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  })) as Task;
}

describe('Upstream follower: a slow upstream holds no other upstream task', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_UPSTREAM_POLL_MIN_MS: '100', RELAY_UPSTREAM_POLL_MAX_MS: '1000' } });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upfo'), name: 'Alice' });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
  });

  it("a handoff to one upstream completes while the follower still waits for another upstream's GetTask", async () => {
    let answerSlow: () => void = () => undefined;
    const slowAnswers = new Promise<void>((resolve) => (answerSlow = resolve));
    const slow = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', holdLaterAnswers: slowAnswers });
    const fast = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(slow, fast);
    const slowHandle = uniqueHandle('slow', 'upfo');
    const fastHandle = uniqueHandle('fast', 'upfo');
    for (const [handle, upstream] of [
      [slowHandle, slow],
      [fastHandle, fast],
    ] as const) {
      const registered = await request(relay.url)
        .post('/admin/agents')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ handle, name: handle.split('@')[0], webhook_timeout_ms: SLOW_TIMEOUT_MS, upstream: { card_url: upstream.cardUrl } });
      expect(registered.status).toBe(201);
    }
    const slowClient = await senderClient(relay, sender, slowHandle);
    const fastClient = await senderClient(relay, sender, fastHandle);

    const slowTask = await send(slowClient, 'take your time');
    // The slow upstream took the handoff and now holds the follower's GetTask.
    await eventually(
      async () => {
        expect(slow.tasksCreated).toHaveLength(1);
        expect(slow.calls.filter((call) => call.method === 'POST').length).toBeGreaterThanOrEqual(2);
      },
      30_000,
      50,
    );
    const startedAt = Date.now();
    const fastTask = await send(fastClient, 'quick one');
    const completed = await eventually(
      async () => {
        const task = await fastClient.getTask({ tenant: '', id: fastTask.id, historyLength: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        return task;
      },
      SLOW_TIMEOUT_MS - 5_000,
      100,
    );
    expect(JSON.stringify(completed.status?.message)).toContain('echo: quick one');
    // Done before the follower could have given up on the slow GetTask: it did not wait for it.
    expect(Date.now() - startedAt).toBeLessThan(SLOW_TIMEOUT_MS);
    expect((await slowClient.getTask({ tenant: '', id: slowTask.id, historyLength: undefined })).status?.state).not.toBe(TaskState.TASK_STATE_COMPLETED);

    answerSlow();
    await eventually(
      async () => {
        const task = await slowClient.getTask({ tenant: '', id: slowTask.id, historyLength: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      },
      60_000,
      100,
    );
    expect(slow.tasksCreated).toHaveLength(1);
    expect(fast.tasksCreated).toHaveLength(1);
  }, 180_000);
});
