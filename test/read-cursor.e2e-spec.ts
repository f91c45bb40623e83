import pg from 'pg';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { ok } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { createTask } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';

/** A read marks the caller's cursor only when it moves it: a polling read writes nothing. */
describe('the read cursor a task read moves', () => {
  let relay: RelayHarness;
  let db: pg.Client;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  /** The row version (`xmin`) and position of a participant's cursor: an unchanged xmin means the row was not rewritten. */
  async function cursor(taskId: string, participantId: string): Promise<{ xmin: string; last_read_sequence_no: number } | undefined> {
    const { rows } = await db.query<{ xmin: string; last_read_sequence_no: number }>(
      `SELECT xmin::text AS xmin, last_read_sequence_no FROM tasks.read_cursors WHERE task_id = $1 AND participant_id = $2`,
      [taskId, participantId],
    );
    return rows[0];
  }

  it('is written by the first read, left alone by reads with nothing new, and moved by a read after a new message', async () => {
    const taskId = await createTask(relay.url, bob, frank);
    await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    const first = await cursor(taskId, frank.agent.id);
    expect(first).toMatchObject({ last_read_sequence_no: 1 });

    await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    expect(await cursor(taskId, frank.agent.id)).toEqual(first);

    await ok(relay.url, bob.api_key, 'message/send', {
      task_id: taskId,
      message: { role: 'user', parts: [{ type: 'text', text: 'One more thing.' }] },
    });
    const unread = await ok(relay.url, frank.api_key, 'tasks/list', { filter: { role: 'recipient' } });
    expect(unread.items).toEqual([expect.objectContaining({ task_id: taskId, unread_messages: 1 })]);
    await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    const moved = await cursor(taskId, frank.agent.id);
    expect(moved?.last_read_sequence_no).toBe(2);
    expect(moved?.xmin).not.toBe(first?.xmin);
    const read = await ok(relay.url, frank.api_key, 'tasks/list', { filter: { role: 'recipient' } });
    expect(read.items).toEqual([expect.objectContaining({ task_id: taskId, unread_messages: 0 })]);
  });
});
