import { randomInt } from 'node:crypto';
import type { AdminSearchPage, SendRequest } from '@app/contracts';
import { SearchAdminTasks } from '../../apps/tasks/src/tasks/admin/search-tasks';
import { TaskSearch } from '../../apps/tasks/src/tasks/admin/task-search';
import { createTask, openTasksDatabase, participant, rejectionOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('the relay-wide search of the admin API against Postgres', () => {
  let database: TasksDatabase;
  let reads: SearchAdminTasks;
  const alice = participant('admin-search-alice');
  const bob = participant('admin-search-bob');
  const word = `axolotl${randomInt(100000, 999999)}`;
  let dense: string;
  let sparse: string;
  let named: string;

  const ids = (page: AdminSearchPage): string[] => page.items.map((item) => item.task.id);

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new SearchAdminTasks(new TaskSearch(database.dataSource));
    dense = (await createTask(database, alice, bob, { message: { parts: textParts(`${word} ${word} ${word}`) } })).id;
    sparse = (
      await createTask(database, bob, alice, {
        message: { parts: textParts(`A long note on the quarterly numbers, the budget, the hiring plan and, once, ${word}, before the closing remarks.`) },
      })
    ).id;
    named = (
      await createTask(database, alice, bob, {
        message: { parts: textParts('see the attachment') },
        artifacts: [{ artifact_id: 'report', name: `${word}-report.pdf`, parts: textParts('content') }],
      } as Partial<SendRequest>)
    ).id;
    await createTask(database, alice, bob, { message: { parts: textParts('nothing to find here') } });
  });

  afterAll(async () => {
    await database.close();
  });

  it('ranks the tasks whose messages or artifact names match, the best first', async () => {
    const page = await reads.search({ query: word });
    expect([...ids(page)].sort()).toEqual([dense, sparse, named].sort());
    const ranks = page.items.map((item) => item.rank);
    expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
    expect(ids(page).indexOf(dense)).toBeLessThan(ids(page).indexOf(sparse));
    expect(page.next_cursor).toBeNull();
    expect(page.items.find((item) => item.task.id === dense)?.task).toMatchObject({
      sender: { handle: alice.handle, name: alice.name },
      recipient: { handle: bob.handle, name: bob.name },
      state: 'pending',
      message_count: 1,
      artifact_count: 0,
    });
    expect(page.items.find((item) => item.task.id === named)?.task.artifact_count).toBe(1);
  });

  it('highlights the matches of messages and of artifact names', async () => {
    const page = await reads.search({ query: word });
    const highlights = (taskId: string) => page.items.find((item) => item.task.id === taskId)?.highlights;
    const match = { text: word, match: true };
    const space = { text: ' ', match: false };
    expect(highlights(dense)).toEqual([{ source: 'message', sequence_no: 1, fragments: [match, space, match, space, match] }]);
    const [sparseHighlight] = highlights(sparse) ?? [];
    expect(sparseHighlight).toMatchObject({ source: 'message', sequence_no: 1 });
    expect(sparseHighlight.fragments.filter((fragment) => fragment.match)).toEqual([{ text: word, match: true }]);
    expect(highlights(named)).toEqual([
      {
        source: 'artifact',
        artifact_name: `${word}-report.pdf`,
        fragments: [
          { text: word, match: true },
          { text: ' report pdf', match: false },
        ],
      },
    ]);
  });

  it('pages on a cursor through the same order', async () => {
    const all = ids(await reads.search({ query: word }));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page += 1) {
      const reply = await reads.search({ query: word, limit: 1, ...(cursor ? { cursor } : {}) });
      seen.push(...ids(reply));
      if (page < 2) expect(reply.next_cursor).toEqual(expect.any(String));
      else expect(reply.next_cursor).toBeNull();
      cursor = reply.next_cursor ?? undefined;
    }
    expect(seen).toEqual(all);
  });

  it("keeps to the admin list's filters", async () => {
    expect(ids(await reads.search({ query: word, agent_id: bob.id, role: 'sender' }))).toEqual([sparse]);
    expect([...ids(await reads.search({ query: word, agent_id: bob.id, role: 'recipient' }))].sort()).toEqual([dense, named].sort());
    const [denseTask] = (await reads.search({ query: word, agent_id: alice.id })).items.filter((item) => item.task.id === dense);
    expect(ids(await reads.search({ query: word, context_id: denseTask.task.context_id }))).toEqual([dense]);
    expect(ids(await reads.search({ query: word, states: ['completed'], agent_id: alice.id }))).toEqual([]);
  });

  it('refuses a cursor it did not return', async () => {
    const listCursor = Buffer.from(JSON.stringify(['a', '2026-01-01T00:00:00.000000Z', dense])).toString('base64url');
    const badRank = Buffer.from(JSON.stringify(['s', 'high', dense])).toString('base64url');
    for (const cursor of [listCursor, badRank, 'garbage']) {
      expect(await rejectionOf(reads.search({ query: word, cursor }))).toMatchObject({ reason: 'invalid_params', data: { field: 'cursor' } });
    }
  });
});
