import { DEFAULT_CHAIN_LIMITS, type SendRequest } from '@app/contracts';
import { SendIdempotency } from '../../apps/tasks/src/tasks/use-cases/send-idempotency';
import { SendTask } from '../../apps/tasks/src/tasks/use-cases/send-task';
import { RecentPairs } from '../../apps/tasks/src/tasks/store/recent-pairs';
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { OrgQuotaMetrics } from '@app/metrics';
import { CHAIN_LOCK_KEY } from '../../apps/tasks/src/tasks/store/sql/chain-facts.sql';
import { nextTaskId } from '../../apps/tasks/src/tasks/store/task-ids';
import { TaskRepository } from '../../apps/tasks/src/tasks/store/task-repository';
import { eventually } from '../support/eventually';
import { createTask, openTasksDatabase, outboxEventsOf, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

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
      new OrgQuotaMetrics(new Registry()),
      database.storedBytes,
      database.createdForUpstream,
      new RecentPairs(),
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

  /** Creates waiting for chain `rootId`'s lock. */
  async function waitingForChain(rootId: string): Promise<number> {
    const [row] = await rowsOf<{ waiting: number }>(
      database,
      `SELECT count(*)::int AS "waiting" FROM pg_locks
       WHERE "locktype" = 'advisory' AND NOT "granted" AND "objid"::bigint = (${CHAIN_LOCK_KEY('$1::text')}::bigint & 4294967295)`,
      [rootId],
    );
    return row.waiting;
  }

  /**
   * A root with one child (two of the budget's three places), and a transaction that holds the
   * chain's lock and has written the third place, not yet committed.
   */
  async function chainWithAPlaceBeingTaken(lead: ReturnType<typeof participant>, helper: ReturnType<typeof participant>, root: { id: string }) {
    await createTask(database, helper, participant('first'), { parent_task_ids: [root.id] });
    const holder: pg.PoolClient = await database.pool.connect();
    await holder.query('BEGIN');
    await holder.query(`SELECT pg_advisory_xact_lock(${CHAIN_LOCK_KEY('$1::text')})`, [root.id]);
    await holder.query(
      `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                   "summary", "created_at", "updated_at", "status_timestamp", "parent_task_id", "root_task_id", "depth")
       VALUES ($1, $2, $3, $4, 'Helper', $5, 'second@acme', 'Second', 'the third place', now(), now(), now(), $6, $6, 1)`,
      [nextTaskId(), randomBytes(8).toString('hex'), helper.id, helper.handle, participant('second').id, root.id],
    );
    return holder;
  }

  // A create reads its chain's facts before its lock is granted (with the lock in one statement, or
  // by its trace before its transaction): a place taken meanwhile is seen by its create statement,
  // which then writes nothing, and the facts read again refuse it.
  for (const linkedBy of ['parent_task_ids', 'traceparent'] as const) {
    it(`refuses, having written nothing, a create (${linkedBy}) whose chain's last place was taken while it waited for the lock`, async () => {
      const [lead, helper, late] = [participant('lead'), participant('helper'), participant('late')];
      const traceId = randomBytes(16).toString('hex');
      const root = await createTask(database, lead, helper, { caller_trace_id: traceId });
      const holder = await chainWithAPlaceBeingTaken(lead, helper, root);
      try {
        const link = linkedBy === 'parent_task_ids' ? { parent_task_ids: [root.id] } : { caller_trace_id: traceId };
        const refused = rejectionOf(sendTask.send({ caller: helper, recipient: late, message: { parts: textParts('one more') }, ...link } as SendRequest));
        await eventually(async () => expect(await waitingForChain(root.id)).toBe(1), 60000);
        await holder.query('COMMIT');
        const refusal = await refused;
        expect(refusal.reason).toBe('chain_budget_exhausted');
        expect(refusal.data).toMatchObject({ parent_task_id: root.id, root_task_id: root.id, limit: BUDGET });
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
      }
      const [stored] = await rowsOf<{ tree: number; late: number }>(
        database,
        `SELECT (SELECT count(*) FROM "tasks"."tasks" WHERE "root_task_id" = $1 OR "id" = $1)::int AS "tree",
                (SELECT count(*) FROM "tasks"."tasks" WHERE "recipient_id" = $2)::int AS "late"`,
        [root.id, late.id],
      );
      expect(stored).toEqual({ tree: BUDGET, late: 0 });
    });
  }

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
