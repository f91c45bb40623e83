import { TASK_LIMITS, type GetRequest, type SendRequest } from '@app/contracts';
import { readTask } from '../../apps/tasks/src/tasks/store/read-query';
import { createTask, openTasksDatabase, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('the read path against Postgres', () => {
  let database: TasksDatabase;
  const alice = participant('alice');
  const bob = participant('bob');

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const read = (request: Partial<GetRequest>) => readTask(database.pool, request as GetRequest);

  const taskWith = async (texts: string[]) => {
    const task = await createTask(database, alice, bob);
    for (const text of texts) await database.sendTask.send({ caller: alice, task_id: task.id, message: { parts: textParts(text) } } as SendRequest);
    return task.id;
  };

  it('pages through the history: the newest ones, or the ones after a sequence number', async () => {
    const taskId = await taskWith(['two', 'three', 'four', 'five']);
    const newest = await read({ caller_id: bob.id, task_id: taskId, history_length: 2, mark_read: false });
    expect(newest.messages.map((message) => message.sequence_no)).toEqual([4, 5]);
    const after = await read({ caller_id: bob.id, task_id: taskId, after_sequence_no: 2, mark_read: false });
    expect(after.messages.map((message) => message.sequence_no)).toEqual([3, 4, 5]);
    const none = await read({ caller_id: bob.id, task_id: taskId, history_length: 0, mark_read: false });
    expect(none.messages).toEqual([]);
  });

  it("keeps a read within the reply's byte budget and pages on to the rest", async () => {
    const big = 'x'.repeat(TASK_LIMITS.textPartChars);
    const taskId = await taskWith([big, big, big, big, big]);
    const newest = await read({ caller_id: bob.id, task_id: taskId, mark_read: false });
    const bytes = (sequence: number[]) =>
      rowsOf(database, `SELECT sum("size_bytes")::int AS "bytes" FROM "tasks"."messages" WHERE "task_id" = $1 AND "sequence_no" = ANY($2)`, [taskId, sequence]);
    const kept = newest.messages.map((message) => message.sequence_no);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(6);
    expect(kept.at(-1)).toBe(6);
    expect((await bytes(kept))[0].bytes).toBeLessThanOrEqual(TASK_LIMITS.replyMessageBytes);
    const seen: number[] = [];
    let after = 0;
    while (after < 6) {
      const page = await read({ caller_id: bob.id, task_id: taskId, after_sequence_no: after, mark_read: false });
      expect(page.messages.length).toBeGreaterThan(0);
      seen.push(...page.messages.map((message) => message.sequence_no));
      after = page.messages.at(-1)!.sequence_no;
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it("moves the reader's cursor (unless told not to), so the unread count falls to zero", async () => {
    const taskId = await taskWith(['two', 'three']);
    const peek = await read({ caller_id: bob.id, task_id: taskId, mark_read: false });
    expect(peek.unread).toBe(3);
    expect(await rowsOf(database, `SELECT 1 FROM "tasks"."read_cursors" WHERE "task_id" = $1`, [taskId])).toEqual([]);
    const marked = await read({ caller_id: bob.id, task_id: taskId });
    expect(marked.unread).toBe(3);
    const [cursor] = await rowsOf(database, `SELECT "participant_id", "last_read_sequence_no" FROM "tasks"."read_cursors" WHERE "task_id" = $1`, [taskId]);
    expect(cursor).toEqual({ participant_id: bob.id, last_read_sequence_no: 3 });
    expect((await read({ caller_id: bob.id, task_id: taskId })).unread).toBe(0);
    expect((await read({ caller_id: alice.id, task_id: taskId, mark_read: false })).unread).toBe(0);
  });

  it('refuses a stranger and an unknown task, marking nothing', async () => {
    const taskId = await taskWith([]);
    expect(await rejectionOf(read({ caller_id: participant('eve').id, task_id: taskId }))).toMatchObject({ reason: 'not_a_participant' });
    expect(await rejectionOf(read({ caller_id: bob.id, task_id: 'T0000000000000000000000000' }))).toMatchObject({ reason: 'thread_not_found' });
    expect(await rowsOf(database, `SELECT 1 FROM "tasks"."read_cursors" WHERE "task_id" = $1`, [taskId])).toEqual([]);
  });
});
