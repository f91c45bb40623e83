import type { ParticipantRefDto, SendRequest, UpstreamApplyRequest } from '@app/contracts';
import { loadTask } from '../../apps/tasks/src/tasks/store/change-write';
import { createTask, openTasksDatabase, participant, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

describe('a task created for an upstream agent, kept for the first report of its answer, against Postgres', () => {
  let database: TasksDatabase;

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  const upstreamAgent = (name: string): ParticipantRefDto => {
    const agent = participant(name);
    database.upstreamAgents.agents.add(agent.handle);
    return agent;
  };

  /** Counts the statements of `name` the pool runs while `run` runs. */
  const counting = async <T>(name: string, run: () => Promise<T>): Promise<{ result: T; count: number }> => {
    const pool = database.pool;
    const query = pool.query.bind(pool);
    let count = 0;
    pool.query = ((config: unknown, ...rest: unknown[]) => {
      if (typeof config === 'object' && config !== null && (config as { name?: string }).name === name) count += 1;
      return (query as (...args: unknown[]) => unknown)(config, ...rest);
    }) as typeof pool.query;
    try {
      return { result: await run(), count };
    } finally {
      pool.query = query;
    }
  };

  const answered = (taskId: string, messageId: string): UpstreamApplyRequest => ({
    task_id: taskId,
    steps: [
      { kind: 'transition', transition: 'accept' },
      { kind: 'append', message: { message_id: messageId, parts: textParts('done: the answer') } },
      { kind: 'transition', transition: 'complete', result_summary: 'answered' },
    ] as UpstreamApplyRequest['steps'],
  });

  it('keeps exactly the task its create wrote: what a read of it gives', async () => {
    const sender = participant('alice');
    const recipient = upstreamAgent('upstream');
    const plain = await createTask(database, sender, recipient);
    const detailed = await createTask(database, sender, recipient, {
      intent: 'ask_question',
      metadata: { ticket: 'OPS-7', nested: { list: [1, 'two', null] } },
      message: { parts: textParts('why is it red?'), message_id: 'm-kept', payload: { a: 1 } },
      context_id: `ctx-${plain.id}`,
    } as Partial<SendRequest>);
    const child = await createTask(database, recipient, upstreamAgent('helper'), { parent_task_ids: [plain.id] } as Partial<SendRequest>);
    for (const task of [plain, detailed, child]) {
      const kept = database.createdForUpstream.take(task.id);
      expect(kept).toBeDefined();
      expect(kept).toEqual(await loadTask(database.pool, task.id));
      // Used once.
      expect(database.createdForUpstream.take(task.id)).toBeUndefined();
    }
  });

  it('keeps nothing for another agent, a task with artifacts, or one held', async () => {
    const sender = participant('alice');
    const other = await createTask(database, sender, participant('bob'));
    const withArtifacts = await createTask(database, sender, upstreamAgent('upstream'), {
      artifacts: [{ name: 'notes', parts: textParts('first') }] as SendRequest['artifacts'],
    });
    const held = await createTask(database, sender, upstreamAgent('upstream'), {
      hold_rules: [{ name: 'hold everything', intents: ['inform'] }],
    } as Partial<SendRequest>);
    expect(held.state).toBe('held');
    for (const task of [other, withArtifacts, held]) expect(database.createdForUpstream.take(task.id)).toBeUndefined();
  });

  it('makes the first report start from the copy, with what reading the task gives', async () => {
    const sender = participant('alice');
    const recipient = upstreamAgent('upstream');
    const kept = await createTask(database, sender, recipient);
    const read = await createTask(database, sender, recipient);
    database.createdForUpstream.take(read.id);
    const fromCopy = await counting('tasks-load-task-for-report', () => database.reportUpstream.apply(answered(kept.id, 'answer-kept')));
    const fromRead = await counting('tasks-load-task-for-report', () => database.reportUpstream.apply(answered(read.id, 'answer-read')));
    expect([fromCopy.count, fromRead.count]).toEqual([0, 1]);
    expect(fromCopy.result).toEqual({ ...fromRead.result, task_id: kept.id });
    const stateOf = async (taskId: string) => {
      const [task] = await rowsOf(database, `SELECT "state", "version", "message_count", "result_summary" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
      const events = await rowsOf<{ type: string }>(database, `SELECT "type" FROM "tasks"."outbox_events" WHERE "task_id" = $1 ORDER BY "position"`, [taskId]);
      return { task, events: events.map((event) => event.type) };
    };
    expect(await stateOf(kept.id)).toEqual(await stateOf(read.id));
    expect((await stateOf(kept.id)).task).toMatchObject({ state: 'completed', version: 2, message_count: 2, result_summary: 'answered' });
  });

  it('reads the task again when it changed after its create: a task the sender cancelled ends the report', async () => {
    const sender = participant('alice');
    const recipient = upstreamAgent('upstream');
    const task = await createTask(database, sender, recipient);
    await database.transitionTask.transition({ caller_id: sender.id, task_id: task.id, transition: 'cancel' } as Parameters<
      TasksDatabase['transitionTask']['transition']
    >[0]);
    const reply = await database.reportUpstream.apply(answered(task.id, 'answer-late'));
    expect(reply).toMatchObject({ state: 'cancelled', ended: true });
    const messages = await rowsOf(database, `SELECT "author" FROM "tasks"."messages" WHERE "task_id" = $1`, [task.id]);
    expect(messages).toEqual([{ author: 'sender' }]);
  });
});
