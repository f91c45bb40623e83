import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness } from './support/relay-harness';
import { openSse } from './support/sse';
import { createTask } from './support/tasks';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';

/**
 * A task stream across a NATS restart (its JetStream store lost too): the stream stays open, and
 * what happens to the task afterwards reaches it, in order, with increasing ids.
 */
describe('a SubscribeToTask stream across a NATS restart', () => {
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    nats = await PrivateNatsServer.start();
    relay = await RelayHarness.start({ env: { NATS_URL: nats.url } });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
  });

  const subscribe = (taskId: string) =>
    openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${bob.api_key}`, 'a2a-version': '1.0' },
      { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } },
    );

  /** Frank accepts and completes, retrying while the relay is still coming back. */
  const acceptAndComplete = async (taskId: string) => {
    await eventually(async () => ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' }), 60000, 250);
    await eventually(async () => ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' }), 60000, 250);
  };

  afterAll(async () => {
    await relay?.stop().catch(() => undefined);
    await nats?.stop();
  });

  it('delivers the changes made after the restart, then ends at the terminal state', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'survive a restart');
    const stream = await subscribe(taskId);
    try {
      expect(stream.status).toBe(200);
      const first = await stream.next();
      expect(first?.data.result.task.status.state).toBe('TASK_STATE_SUBMITTED');

      await nats.restart();
      await acceptAndComplete(taskId);

      const rest = await stream.rest();
      const states = rest.map((event) => event.data.result?.statusUpdate?.status?.state ?? event.event ?? 'other');
      expect(states).toEqual(['TASK_STATE_WORKING', 'TASK_STATE_COMPLETED']);
      // Each event once (the states show the order; the ids are opaque).
      const ids = [first?.id, ...rest.map((event) => event.id)];
      expect(new Set(ids).size).toBe(3);
    } finally {
      stream.close();
    }
  }, 180000);

  it('reads what it missed once the tasks service answers again, when NATS came back before it', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'NATS back before the tasks service');
    const stream = await subscribe(taskId);
    try {
      expect((await stream.next())?.data.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
      await relay.stopService('tasks');
      await nats.restart();
      // The edge reconnects and reads what it missed while no tasks service answers.
      await new Promise((resolve) => setTimeout(resolve, 5000));
      await relay.startService('tasks');
      await acceptAndComplete(taskId);
      const rest = await stream.rest();
      expect(rest.map((event) => event.data.result?.statusUpdate?.status?.state ?? event.event ?? 'other')).toEqual([
        'TASK_STATE_WORKING',
        'TASK_STATE_COMPLETED',
      ]);
    } finally {
      stream.close();
    }
  }, 180000);
});
