import { DEFAULT_CHAIN_LIMITS, type SendRequest } from '@app/contracts';
import { SendIdempotency } from '../../apps/tasks/src/tasks/use-cases/send-idempotency';
import { SendTask } from '../../apps/tasks/src/tasks/use-cases/send-task';
import { TaskRepository } from '../../apps/tasks/src/tasks/store/task-repository';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

/** The chain bounds at the store: racing creates for the last place of a budget, and the event every create writes. */
describe('chains at the create write path', () => {
  let database: TasksDatabase;
  const BUDGET = 3;
  let sendTask: SendTask;

  beforeAll(async () => {
    database = await openTasksDatabase();
    sendTask = new SendTask(
      database.dataSource,
      new SendIdempotency(new TaskRepository()),
      {
        ...DEFAULT_CHAIN_LIMITS,
        budget: BUDGET,
        pairPerMinute: 1_000_000,
      },
      database.handedOver,
    );
  });

  afterAll(async () => {
    await database.close();
  });

  it('gives the last place of a budget to one of many racing creates, and writes nothing for the others', async () => {
    const [lead, helper] = [participant('lead'), participant('helper')];
    const root = await createTask(database, lead, helper);
    await createTask(database, helper, participant('first'), { parent_task_ids: [root.id] });
    const racers = Array.from({ length: 8 }, (_, index) => participant(`racer${index}`));
    const outcomes = await Promise.allSettled(
      racers.map((racer) =>
        sendTask.send({ caller: helper, recipient: racer, parent_task_ids: [root.id], message: { parts: textParts('for the root') } } as SendRequest),
      ),
    );
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refusals = outcomes
      .filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
      .map((outcome) => (outcome.reason as { reason: string }).reason);
    expect(refusals).toEqual(Array(7).fill('chain_budget_exhausted'));
    const [tree] = await rowsOf<{ count: string }>(database, `SELECT count(*) FROM "tasks"."tasks" WHERE "root_task_id" = $1 OR "id" = $1`, [root.id]);
    expect(Number(tree.count)).toBe(BUDGET);
  });

  it("writes the chain into the created event's payload, with the root's sender", async () => {
    const [a, b, c, d] = [participant('a'), participant('b'), participant('c'), participant('d')];
    const root = await createTask(database, a, b);
    const child = await createTask(database, b, c, { parent_task_ids: ['01HXYZ4K2VNJQP7R8MWDB3CSTF', root.id] });
    expect(child.chain).toEqual({ parent_task_id: root.id, root_task_id: root.id, depth: 1 });
    const [created] = await outboxEventsOf(database, child.id);
    expect(created.payload.chain).toEqual({ parent_task_id: root.id, root_task_id: root.id, depth: 1, root_sender: a.handle });
    // Two hops down the root's sender is still a's, not the parent's sender; a root is its own, and stores none.
    const grandchild = await createTask(database, c, d, { parent_task_ids: [child.id] });
    const [deeper] = await outboxEventsOf(database, grandchild.id);
    expect(deeper.payload.chain).toEqual({ parent_task_id: child.id, root_task_id: root.id, depth: 2, root_sender: a.handle });
    const [rootCreated] = await outboxEventsOf(database, root.id);
    expect(rootCreated.payload.chain).toEqual({ parent_task_id: null, root_task_id: root.id, depth: 0, root_sender: a.handle });
    const stored = await rowsOf<{ id: string; root_sender_handle: string | null }>(
      database,
      `SELECT "id", "root_sender_handle" FROM "tasks"."tasks" WHERE "id" = ANY($1) ORDER BY "depth"`,
      [[root.id, child.id, grandchild.id]],
    );
    expect(stored.map((row) => row.root_sender_handle)).toEqual([null, a.handle, a.handle]);
  });
});
