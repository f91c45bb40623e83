import { TASK_LIMITS, type SendRequest } from '@app/contracts';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('the append write path against Postgres', () => {
  let database: TasksDatabase;

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const append = (caller: SendRequest['caller'], taskId: string, text: string, extra: Partial<SendRequest> = {}) =>
    database.sendTask.send({ caller, task_id: taskId, message: { parts: textParts(text) }, ...extra } as SendRequest);

  it("appends the sender's and the recipient's messages in sequence, each with its event", async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const task = await createTask(database, alice, bob);
    const fromSender = await append(alice, task.id, 'more context');
    const fromRecipient = await append(bob, task.id, 'on it');
    expect(fromSender).toMatchObject({ created: false, idempotent_replay: false, message: { sequence_no: 2 } });
    expect(fromRecipient).toMatchObject({ created: false, message: { sequence_no: 3 }, task: { message_count: 3, unread_messages: 2 } });
    const messages = await rowsOf(database, `SELECT "sequence_no", "author", "author_id" FROM "tasks"."messages" WHERE "task_id" = $1 ORDER BY 1`, [task.id]);
    expect(messages).toEqual([
      { sequence_no: 1, author: 'sender', author_id: alice.id },
      { sequence_no: 2, author: 'sender', author_id: alice.id },
      { sequence_no: 3, author: 'recipient', author_id: bob.id },
    ]);
    const events = await outboxEventsOf(database, task.id);
    expect(events.map((event) => [event.type, event.payload.sequence_no])).toEqual([
      ['created', 1],
      ['message_appended', 2],
      ['message_appended', 3],
    ]);
  });

  it("resumes a task waiting for the sender's input: audit row, then message_appended and accepted", async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const task = await createTask(database, alice, bob);
    await database.transitionTask.transition({ caller_id: bob.id, task_id: task.id, transition: 'accept', history_length: 0 });
    await database.transitionTask.transition({
      caller_id: bob.id,
      task_id: task.id,
      transition: 'request_input',
      message: { parts: textParts('which branch?') },
    });
    const answer = await append(alice, task.id, 'main');
    expect(answer.task.state).toBe('accepted');
    const audit = await rowsOf(database, `SELECT "transition", "from_state", "to_state" FROM "tasks"."audit_log" WHERE "task_id" = $1 ORDER BY "id"`, [
      task.id,
    ]);
    expect(audit.at(-1)).toEqual({ transition: 'resume', from_state: 'input_required', to_state: 'accepted' });
    const events = await outboxEventsOf(database, task.id);
    expect(events.slice(-2).map((event) => [event.type, event.payload.sequence_no])).toEqual([
      ['message_appended', 3],
      ['accepted', 3],
    ]);
  });

  it('answers a retried append with the first message, once', async () => {
    const alice = participant('alice');
    const task = await createTask(database, alice, participant('bob'));
    const first = await append(alice, task.id, 'again', { idempotency_key: 'append-1' });
    const retry = await append(alice, task.id, 'again', { idempotency_key: 'append-1' });
    expect(retry).toMatchObject({ message: { id: first.message.id, sequence_no: 2 }, created: false, idempotent_replay: true });
    const [{ count }] = await rowsOf(database, `SELECT count(*)::int AS "count" FROM "tasks"."messages" WHERE "task_id" = $1`, [task.id]);
    expect(count).toBe(2);
  });

  it('refuses a message to a terminal task, one past the message cap, and a stranger', async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const done = await createTask(database, alice, bob);
    await database.transitionTask.transition({ caller_id: alice.id, task_id: done.id, transition: 'cancel', history_length: 0 });
    expect(await rejectionOf(append(alice, done.id, 'late'))).toMatchObject({ reason: 'thread_terminal', data: { state: 'cancelled' } });

    const full = await createTask(database, alice, bob);
    // The cap counts the task's messages: a task holding the maximum (its count as the row says).
    await database.pool.query(`UPDATE "tasks"."tasks" SET "message_count" = $2 WHERE "id" = $1`, [full.id, TASK_LIMITS.messagesPerTask]);
    expect(await rejectionOf(append(bob, full.id, 'one more'))).toMatchObject({
      reason: 'thread_message_limit',
      data: { limit: TASK_LIMITS.messagesPerTask },
    });
    expect(await rejectionOf(append(participant('eve'), full.id, 'hi'))).toMatchObject({ reason: 'not_a_participant' });
  });

  it('gives two concurrent appends with one key one message: the other replays it', async () => {
    const alice = participant('alice');
    const task = await createTask(database, alice, participant('bob'));
    const replies = await Promise.all([
      append(alice, task.id, 'once', { idempotency_key: 'twice' }),
      append(alice, task.id, 'once', { idempotency_key: 'twice' }),
    ]);
    expect(replies[0].message.id).toBe(replies[1].message.id);
    expect(replies.map((reply) => reply.idempotent_replay).sort()).toEqual([false, true]);
    const [{ count }] = await rowsOf(database, `SELECT count(*)::int AS "count" FROM "tasks"."messages" WHERE "task_id" = $1`, [task.id]);
    expect(count).toBe(2);
  });

  it('keeps sequence numbers unique and contiguous under concurrent appends from both sides', async () => {
    const alice = participant('alice');
    const bob = participant('bob');
    const task = await createTask(database, alice, bob);
    const replies = await Promise.all(Array.from({ length: 12 }, (_, index) => append(index % 2 === 0 ? alice : bob, task.id, `message ${index}`)));
    const numbers = replies.map((reply) => reply.message.sequence_no).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: 12 }, (_, index) => index + 2));
    const stored = await rowsOf<{ sequence_no: number }>(database, `SELECT "sequence_no" FROM "tasks"."messages" WHERE "task_id" = $1 ORDER BY 1`, [task.id]);
    expect(stored.map((row) => row.sequence_no)).toEqual(Array.from({ length: 13 }, (_, index) => index + 1));
    const [row] = await rowsOf(database, `SELECT "message_count" FROM "tasks"."tasks" WHERE "id" = $1`, [task.id]);
    expect(row.message_count).toBe(13);
  });
});
