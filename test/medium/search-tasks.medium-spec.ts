import { randomInt } from 'node:crypto';
import type { AgentSearchReply, SendRequest } from '@app/contracts';
import { TaskSearch } from '../../apps/tasks/src/tasks/admin/task-search';
import { ReadTasks } from '../../apps/tasks/src/tasks/use-cases/read-tasks';
import { SearchTasks } from '../../apps/tasks/src/tasks/use-cases/search-tasks';
import { createTask, openTasksDatabase, participant, rejectionOf, textParts, type TasksDatabase } from './support/tasks-database';

describe("an agent's search of its tasks (tasks/search) against Postgres", () => {
  let database: TasksDatabase;
  let reads: SearchTasks;
  const alice = participant('agent-search-alice');
  const bob = participant('agent-search-bob');
  const carol = participant('agent-search-carol');
  const word = `walrus${randomInt(100000, 999999)}`;
  const ids: Record<'toBob' | 'fromBob' | 'carolToBob' | 'held', string> = { toBob: '', fromBob: '', carolToBob: '', held: '' };

  const found = (reply: AgentSearchReply): string[] => reply.items.map((item) => item.task.id).sort();
  const sorted = (...names: Array<keyof typeof ids>): string[] => names.map((name) => ids[name]).sort();

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new SearchTasks(new TaskSearch(database.dataSource));
    const message = { message: { parts: textParts(`the ${word} report is late`) } };
    ids.toBob = (await createTask(database, alice, bob, message)).id;
    ids.fromBob = (await createTask(database, bob, alice, message)).id;
    ids.carolToBob = (await createTask(database, carol, bob, message)).id;
    ids.held = (
      await createTask(database, carol, bob, { ...message, hold_rules: [{ name: 'hold everything', intents: ['inform'] }] } as Partial<SendRequest>)
    ).id;
  });

  afterAll(async () => {
    await database.close();
  });

  it("finds the caller's tasks on either side or one, never those held from it", async () => {
    expect(found(await reads.search({ caller_id: bob.id, query: word }))).toEqual(sorted('toBob', 'fromBob', 'carolToBob'));
    expect(found(await reads.search({ caller_id: bob.id, query: word, role: 'sender' }))).toEqual(sorted('fromBob'));
    expect(found(await reads.search({ caller_id: bob.id, query: word, role: 'recipient' }))).toEqual(sorted('toBob', 'carolToBob'));
    expect(found(await reads.search({ caller_id: carol.id, query: word }))).toEqual(sorted('carolToBob', 'held'));
    expect(found(await reads.search({ caller_id: participant('agent-search-nobody').id, query: word }))).toEqual([]);
  });

  it('keeps to one counterpart on its endpoint, and to the states asked for', async () => {
    expect(found(await reads.search({ caller_id: bob.id, query: word, counterpart_id: alice.id }))).toEqual(sorted('toBob', 'fromBob'));
    await database.transitionTask.transition({ caller_id: bob.id, task_id: ids.carolToBob, transition: 'accept', history_length: 0 });
    expect(found(await reads.search({ caller_id: bob.id, query: word, states: ['accepted'] }))).toEqual(sorted('carolToBob'));
  });

  it("counts the caller's unread messages of each task found, as its task list does", async () => {
    await database.sendTask.send({ caller: alice, task_id: ids.toBob, message: { parts: textParts('and one more thing') } } as SendRequest);
    const unread = async (callerId: string): Promise<Record<string, number>> =>
      Object.fromEntries((await reads.search({ caller_id: callerId, query: word })).items.map((item) => [item.task.id, item.task.unread_messages]));
    expect(await unread(bob.id)).toEqual({ [ids.toBob]: 2, [ids.fromBob]: 0, [ids.carolToBob]: 1 });
    expect(await unread(alice.id)).toEqual({ [ids.toBob]: 0, [ids.fromBob]: 1 });
    const listed = (await new ReadTasks(database.dataSource).list({ caller_id: bob.id, role: 'either' })).items.map((item) => [item.id, item.unread_messages]);
    expect(Object.fromEntries(listed)).toEqual(await unread(bob.id));
    await new ReadTasks(database.dataSource).get({ caller_id: bob.id, task_id: ids.toBob });
    expect((await unread(bob.id))[ids.toBob]).toBe(0);
  });

  it('gives each task found its highlights, and refuses a cursor of another list', async () => {
    const reply = await reads.search({ caller_id: alice.id, query: word, role: 'sender' });
    expect(reply.items).toHaveLength(1);
    expect(reply.items[0].highlights).toEqual([
      {
        source: 'message',
        sequence_no: 1,
        fragments: [
          { text: 'the ', match: false },
          { text: word, match: true },
          { text: ' report is late', match: false },
        ],
      },
    ]);
    expect(reply.next_cursor).toBeNull();
    const listCursor = Buffer.from(JSON.stringify(['a', '2026-01-01T00:00:00.000000Z', ids.toBob])).toString('base64url');
    expect(await rejectionOf(reads.search({ caller_id: alice.id, query: word, cursor: listCursor }))).toMatchObject({
      reason: 'invalid_params',
      data: { field: 'cursor' },
    });
  });
});
