import { randomUUID } from 'node:crypto';
import { A2aRawClient, message } from './support/a2a-raw';
import type { RegisteredTestAgent } from './support/agents';
import type { Json } from './support/json-rpc';
import type { RelayHarness } from './support/relay-harness';

/**
 * Raw JSON-RPC against the standard A2A surface, the read family: GetTask history lengths, long
 * histories and the list budget, and ListTasks filters.
 */
describe('A2A JSON-RPC, raw', () => {
  const raw = new A2aRawClient();
  const { call, v1, newTask, agentRelay, getTask, agent } = raw;
  let relay: RelayHarness;
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

  describe('historyLength', () => {
    it('accepts both spellings: 0 drops the history, N keeps the most recent N', async () => {
      const task = await newTask(alice, bob, 'h1');
      for (const text of ['h2', 'h3'])
        await v1(alice, '/a2a', 'SendMessage', { message: message(text, { taskId: task.id }), configuration: { returnImmediately: true } });
      const none = await getTask(alice, task.id, { historyLength: 0 });
      expect(none).not.toHaveProperty('history');
      expect(none.status.message.parts[0].text).toBe('h3');
      expect((await getTask(alice, task.id, { history_length: 2 })).history.map((entry: Json) => entry.parts[0].text)).toEqual(['h2', 'h3']);
      expect((await getTask(alice, task.id)).history).toHaveLength(3);
      const legacy = await call(alice, '/a2a', 'tasks/get', { id: task.id, historyLength: 1 });
      expect(legacy.body.result.history.map((entry: Json) => entry.parts[0].text)).toEqual(['h3']);
      const sent = await v1(alice, '/a2a', 'SendMessage', {
        message: message('h4', { task_id: task.id }),
        configuration: { return_immediately: true, history_length: 1 },
      });
      expect(sent.task.history.map((entry: Json) => entry.parts[0].text)).toEqual(['h4']);
    });
  });

  describe('long histories', () => {
    it('returns a history larger than one service reply whole, and flags it when it passes the budget', async () => {
      const big = (letter: string): Json[] => [1, 2, 3].map(() => ({ text: letter.repeat(100_000) }));
      const task = await newTask(alice, bob, 'x', { parts: big('a') });
      await v1(alice, '/a2a', 'SendMessage', {
        message: { messageId: randomUUID(), role: 'ROLE_USER', taskId: task.id, parts: big('b') },
        configuration: { returnImmediately: true, historyLength: 0 },
      });
      await v1(alice, '/a2a', 'SendMessage', { message: message('small', { taskId: task.id }), configuration: { returnImmediately: true, historyLength: 0 } });

      const whole = await getTask(alice, task.id);
      expect(whole.history.map((entry: Json) => entry.parts.length)).toEqual([3, 3, 1]);
      expect(whole.history[0].parts[0].text).toHaveLength(100_000);
      expect(whole.metadata.relay).not.toHaveProperty('historyTruncated');
      const listed = await v1(alice, `/a2a/${bob.agent.handle}`, 'ListTasks', {});
      expect(listed.tasks.find((entry: Json) => entry.id === task.id).history).toHaveLength(3);

      const small = await relay.startEdge({ RELAY_LIST_HISTORY_BUDGET_BYTES: '2048' });
      const cut = await v1(alice, '/a2a', 'GetTask', { id: task.id }, relay.urlOf(small));
      expect(cut.metadata.relay.historyTruncated).toBe(true);
      expect(cut.history.at(-1).parts[0].text).toBe('small');
      expect(cut.history.length).toBeLessThan(3);
    });
  });

  describe('ListTasks filters', () => {
    it('filters by status, context and status timestamp, pages with a stable totalSize', async () => {
      const dave = await agent('dave');
      const erin = await agent('erin');
      const path = `/a2a/${erin.agent.handle}`;
      const t0 = await newTask(dave, erin, 'zero');
      const t1 = await newTask(dave, erin, 'one');
      const t2 = await newTask(dave, erin, 'two');
      const mark = t2.status.timestamp as string;
      await agentRelay(erin, 'tasks/update', { task_id: t1.id, transition: 'accept' });

      const working = await v1(dave, path, 'ListTasks', { status: 'TASK_STATE_WORKING' });
      expect(working.tasks.map((entry: Json) => entry.id)).toEqual([t1.id]);
      expect(working.totalSize).toBe(1);
      expect((await v1(dave, path, 'ListTasks', { context_id: t0.contextId })).tasks.map((entry: Json) => entry.id)).toEqual([t0.id]);
      const recent = (await v1(dave, path, 'ListTasks', { statusTimestampAfter: mark })).tasks.map((entry: Json) => entry.id);
      expect(recent).toContain(t1.id);
      expect(recent).not.toContain(t0.id);

      const all = await v1(dave, path, 'ListTasks', {});
      expect(all.tasks.map((entry: Json) => entry.id)).toEqual([t1.id, t2.id, t0.id]);
      expect(all).toMatchObject({ totalSize: 3, nextPageToken: '', pageSize: 50 });
      const page1 = await v1(dave, path, 'ListTasks', { page_size: 1, history_length: 0 });
      expect(page1.tasks[0]).not.toHaveProperty('history');
      expect(page1.tasks[0]).not.toHaveProperty('artifacts');
      await newTask(dave, erin, 'three');
      const page2 = await v1(dave, path, 'ListTasks', { pageSize: 1, pageToken: page1.nextPageToken });
      expect(page2.totalSize).toBe(3);
      expect(page2.tasks).toHaveLength(1);
      expect(await v1(dave, path, 'ListTasks', { pageSize: 101 }).catch((error: Error) => error.message)).toMatch(/-32602/);
    });

    it('includes artifacts only when asked', async () => {
      const task = await newTask(alice, carol, 'artifact holder');
      await v1(carol, '/a2a', 'CompleteTask', { id: task.id, artifacts: [{ artifactId: 'x', parts: [{ data: { ok: true } }] }] });
      const path = `/a2a/${carol.agent.handle}`;
      const without = await v1(alice, path, 'ListTasks', {});
      expect(without.tasks.find((entry: Json) => entry.id === task.id)).not.toHaveProperty('artifacts');
      const withArtifacts = await v1(alice, path, 'ListTasks', { includeArtifacts: true });
      expect(withArtifacts.tasks.find((entry: Json) => entry.id === task.id).artifacts).toEqual([{ artifactId: 'x', parts: [{ data: { ok: true } }] }]);
    });

    it('drops histories over the page budget and flags those tasks', async () => {
      const smallBudget = await relay.startEdge({ RELAY_LIST_HISTORY_BUDGET_BYTES: '2048' });
      const frank = await agent('frank');
      const gina = await agent('gina');
      const older = await newTask(frank, gina, 'a'.repeat(1500));
      const newer = await newTask(frank, gina, 'b'.repeat(1500));
      const page = await v1(frank, `/a2a/${gina.agent.handle}`, 'ListTasks', {}, relay.urlOf(smallBudget));
      const [first, second] = page.tasks as Json[];
      expect([first.id, second.id]).toEqual([newer.id, older.id]);
      expect(first.history).toHaveLength(1);
      expect(first.metadata.relay).not.toHaveProperty('historyTruncated');
      expect(second).not.toHaveProperty('history');
      expect(second.metadata.relay.historyTruncated).toBe(true);
      const full = await v1(frank, `/a2a/${gina.agent.handle}`, 'ListTasks', {});
      expect(full.tasks.every((entry: Json) => entry.history?.length === 1)).toBe(true);
    });
  });
});
