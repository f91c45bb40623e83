import { MetricsServer } from '@app/metrics';
import { A2aRawClient, message } from './support/a2a-raw';
import type { RegisteredTestAgent } from './support/agents';
import { PrometheusScrape } from './support/prometheus-text';

/**
 * On an agent's endpoint (`/a2a/{handle}`) only the tasks between the caller and that agent exist.
 * The tasks service decides it in the same query that reads or changes the task, so a call makes
 * one request of the tasks service and a task between other agents is "not found", unchanged.
 */
describe("an agent's endpoint scopes every task call to the pair", () => {
  const raw = new A2aRawClient();
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  beforeAll(async () => {
    await raw.start();
    [bob, frank, carol] = await Promise.all([raw.agent('bob'), raw.agent('frank'), raw.agent('carol')]);
  });

  afterAll(async () => {
    await raw.stop();
  });

  /** Requests this edge sent the tasks service so far, by subject. */
  async function tasksRequests(): Promise<Map<string, number>> {
    const response = await fetch(`${raw.relay.edge.get(MetricsServer).url}/metrics`);
    const counts = new Map<string, number>();
    for (const sample of PrometheusScrape.parse(await response.text()).samples('agentrelay_nats_client_requests_total')) {
      const subject = sample.labels.subject ?? '';
      if (subject.startsWith('relay.tasks.')) counts.set(subject, (counts.get(subject) ?? 0) + sample.value);
    }
    return counts;
  }

  async function requestsDuring(call: () => Promise<unknown>): Promise<Record<string, number>> {
    const before = await tasksRequests();
    await call();
    const after = await tasksRequests();
    const sent: Record<string, number> = {};
    for (const [subject, count] of after) if (count > (before.get(subject) ?? 0)) sent[subject] = count - (before.get(subject) ?? 0);
    return sent;
  }

  it('answers "task not found" on a third agent\'s endpoint for every method, changing nothing', async () => {
    const task = await raw.newTask(bob, frank, 'Between Bob and Frank only.');
    const elsewhere = `/a2a/${carol.agent.handle}`;
    const refused = async (method: string, params: Record<string, unknown>): Promise<void> => {
      const error = await raw.v1Error(bob, elsewhere, method, params);
      expect({ method, code: error.code }).toEqual({ method, code: -32001 });
    };
    await refused('GetTask', { id: task.id });
    await refused('SendMessage', { message: { ...message('Sneaking in.'), taskId: task.id } });
    await refused('CancelTask', { id: task.id });
    await refused('CreateTaskPushNotificationConfig', { taskId: task.id, url: 'https://example.com/hook' });
    await refused('ListTaskPushNotificationConfigs', { taskId: task.id });
    await refused('GetTaskPushNotificationConfig', { taskId: task.id, id: 'none' });
    await refused('DeleteTaskPushNotificationConfig', { taskId: task.id, id: 'none' });
    await refused('SubscribeToTask', { id: task.id });
    const listed = await raw.v1(bob, elsewhere, 'ListTasks', {});
    expect(listed.tasks).toEqual([]);

    const relayCall = async (method: string, params: Record<string, unknown>) => (await raw.call(bob, elsewhere, method, params)).body;
    // The AgentRelay dialect's "task not found" (docs/dialects.md#errors).
    expect((await relayCall('tasks/get', { task_id: task.id })).error).toMatchObject({ code: -32006 });
    expect((await relayCall('tasks/cancel', { task_id: task.id })).error).toMatchObject({ code: -32006 });
    expect((await relayCall('tasks/update', { task_id: task.id, transition: 'cancel' })).error).toMatchObject({ code: -32006 });
    expect((await relayCall('tasks/search', { query: 'Frank' })).result).toMatchObject({ items: [] });

    const unchanged = await raw.getTask(bob, task.id as string, { historyLength: 10 });
    expect(unchanged.status.state).toBe('TASK_STATE_SUBMITTED');
    expect(unchanged.history).toHaveLength(1);
    expect((await raw.v1(bob, '/a2a', 'ListTaskPushNotificationConfigs', { taskId: task.id })).configs ?? []).toEqual([]);
    // Frank never read it: the refused reads marked nothing for anyone.
    const inbox = await raw.agentRelay(frank, 'tasks/list', { filter: { role: 'recipient' } });
    expect(inbox.items).toEqual([expect.objectContaining({ task_id: task.id, unread_messages: 1 })]);
  });

  it("serves the pair's task on the counterpart's endpoint with one request of the tasks service per call", async () => {
    const task = await raw.newTask(bob, frank, 'Please review.');
    const own = `/a2a/${frank.agent.handle}`;
    expect(await requestsDuring(() => raw.v1(bob, own, 'GetTask', { id: task.id }))).toEqual({ 'relay.tasks.v1.get': 1 });
    expect(
      await requestsDuring(() =>
        raw.v1(bob, own, 'SendMessage', { message: { ...message('One more thing.'), taskId: task.id }, configuration: { returnImmediately: true } }),
      ),
    ).toEqual({
      'relay.tasks.v1.send': 1,
    });
    expect(await requestsDuring(() => raw.v1(bob, own, 'ListTaskPushNotificationConfigs', { taskId: task.id }))).toEqual({
      'relay.tasks.v1.push_configs.list': 1,
    });
    expect(await requestsDuring(() => raw.v1(bob, own, 'CancelTask', { id: task.id }))).toEqual({ 'relay.tasks.v1.transition': 1 });
    const cancelled = await raw.getTask(bob, task.id as string, { historyLength: 10 });
    expect(cancelled.status.state).toBe('TASK_STATE_CANCELED');
    expect(cancelled.history).toHaveLength(2);
  });
});
