import { TASK_STATES, type TaskState } from '@app/contracts';
import { AdminTaskCounts } from '../../apps/tasks/src/tasks/admin/task-counts';
import { createTask, openTasksDatabase, participant, type TasksDatabase } from './support/tasks-database';

describe("the admin counts of an agent's tasks against Postgres", () => {
  let database: TasksDatabase;
  let reads: AdminTaskCounts;
  const alice = participant('counts-alice');
  const bob = participant('counts-bob');

  const counts = (nonZero: Partial<Record<TaskState, number>>): Record<TaskState, number> => ({
    ...(Object.fromEntries(TASK_STATES.map((state) => [state, 0])) as Record<TaskState, number>),
    ...nonZero,
  });

  beforeAll(async () => {
    database = await openTasksDatabase();
    reads = new AdminTaskCounts(database.dataSource);
  });

  afterAll(async () => {
    await database.close();
  });

  it('counts every state, zero where an agent has no task', async () => {
    expect(await reads.counts({ agent_id: participant('counts-nobody').id })).toEqual({ inbox: counts({}), sent: counts({}) });
  });

  it('counts the tasks an agent received (inbox) and sent, per state', async () => {
    const accepted = await createTask(database, alice, bob);
    await createTask(database, alice, bob);
    const declined = await createTask(database, alice, bob);
    await createTask(database, bob, alice);
    await database.transitionTask.transition({ caller_id: bob.id, task_id: accepted.id, transition: 'accept', history_length: 0 });
    await database.transitionTask.transition({ caller_id: bob.id, task_id: declined.id, transition: 'decline', history_length: 0 });
    expect(await reads.counts({ agent_id: bob.id })).toEqual({ inbox: counts({ pending: 1, accepted: 1, rejected: 1 }), sent: counts({ pending: 1 }) });
    expect(await reads.counts({ agent_id: alice.id })).toEqual({ inbox: counts({ pending: 1 }), sent: counts({ pending: 1, accepted: 1, rejected: 1 }) });
  });
});
