import type { AdminTaskPage, TaskView } from '@app/contracts';
import { ListAdminTasks } from '../../apps/tasks/src/tasks/admin/list-tasks';
import { createTask, openTasksDatabase, participant, rejectionOf, rowsOf, type TasksDatabase } from './support/tasks-database';

describe('the admin list of tasks against Postgres', () => {
  let database: TasksDatabase;
  let reads: ListAdminTasks;
  const alice = participant('list-alice');
  const bob = participant('list-bob');
  const carol = participant('list-carol');
  let first: TaskView;
  let question: TaskView;
  let reply: TaskView;
  let carols: TaskView;
  let latest: TaskView;

  const ids = (page: AdminTaskPage): string[] => page.items.map((item) => item.id);

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new ListAdminTasks(database.dataSource);
    first = await createTask(database, alice, bob);
    question = await createTask(database, alice, bob, { intent: 'ask_question' });
    reply = await createTask(database, bob, alice);
    carols = await createTask(database, carol, bob);
    latest = await createTask(database, alice, carol);
    await database.transitionTask.transition({ caller_id: bob.id, task_id: question.id, transition: 'accept', history_length: 0 });
  });

  afterAll(async () => {
    await database.close();
  });

  it("lists an agent's tasks newest first, on either side or one", async () => {
    expect(ids(await reads.list({ agent_id: alice.id }))).toEqual([latest.id, reply.id, question.id, first.id]);
    expect(ids(await reads.list({ agent_id: alice.id, role: 'sender' }))).toEqual([latest.id, question.id, first.id]);
    expect(ids(await reads.list({ agent_id: alice.id, role: 'recipient' }))).toEqual([reply.id]);
    expect(ids(await reads.list({ agent_id: bob.id, role: 'recipient' }))).toEqual([carols.id, question.id, first.id]);
  });

  it('filters by state, intent, context and creation time', async () => {
    expect(ids(await reads.list({ agent_id: bob.id, states: ['accepted'] }))).toEqual([question.id]);
    expect(ids(await reads.list({ agent_id: bob.id, states: ['pending', 'pending'] }))).toEqual([carols.id, reply.id, first.id]);
    expect(ids(await reads.list({ agent_id: alice.id, intents: ['ask_question'] }))).toEqual([question.id]);
    expect(ids(await reads.list({ context_id: first.context_id }))).toEqual([first.id]);
    expect(ids(await reads.list({ context_id: question.context_id, states: ['pending', 'accepted'] }))).toEqual([question.id]);
    expect(ids(await reads.list({ context_id: question.context_id, states: ['pending'] }))).toEqual([]);
    expect(ids(await reads.list({ agent_id: alice.id, created_after: reply.created_at }))).toEqual([latest.id]);
    expect(ids(await reads.list({ agent_id: alice.id, created_before: question.created_at }))).toEqual([first.id]);
  });

  it('pages on a cursor until the last page, which has none', async () => {
    const one = await reads.list({ agent_id: alice.id, limit: 3 });
    expect(ids(one)).toEqual([latest.id, reply.id, question.id]);
    expect(one.next_cursor).toEqual(expect.any(String));
    const two = await reads.list({ agent_id: alice.id, limit: 3, cursor: one.next_cursor as string });
    expect(ids(two)).toEqual([first.id]);
    expect(two.next_cursor).toBeNull();
    const exact = await reads.list({ agent_id: alice.id, role: 'sender', limit: 3 });
    expect(ids(exact)).toEqual([latest.id, question.id, first.id]);
    expect(exact.next_cursor).toBeNull();
  });

  it('gives each row its parties, counts and newest event position', async () => {
    const [row] = (await reads.list({ context_id: question.context_id })).items;
    const [{ position }] = await rowsOf<{ position: string }>(
      database,
      `SELECT max("position")::text AS "position" FROM "tasks"."outbox_events" WHERE "task_id" = $1`,
      [question.id],
    );
    expect(row).toEqual({
      id: question.id,
      context_id: question.context_id,
      state: 'accepted',
      intent: 'ask_question',
      summary: 'please look',
      sender: { handle: alice.handle, name: alice.name },
      recipient: { handle: bob.handle, name: bob.name },
      message_count: 1,
      artifact_count: 0,
      created_at: question.created_at,
      updated_at: expect.any(String),
      status_timestamp: expect.any(String),
      last_event_position: position,
      chain: { parent_task_id: null, root_task_id: question.id, depth: 0 },
    });
    expect(Date.parse(row.status_timestamp)).toBeGreaterThan(Date.parse(question.created_at));
  });

  it('refuses a cursor it did not return', async () => {
    const page = await reads.list({ agent_id: alice.id, limit: 1 });
    const forged = Buffer.from(JSON.stringify(['a', 'yesterday', first.id])).toString('base64url');
    const searchCursor = Buffer.from(JSON.stringify(['s', '0.5', first.id])).toString('base64url');
    for (const cursor of [forged, searchCursor, 'not-base64-json', `${page.next_cursor as string}x`]) {
      expect(await rejectionOf(reads.list({ agent_id: alice.id, cursor }))).toMatchObject({ reason: 'invalid_params', data: { field: 'cursor' } });
    }
  });
});
