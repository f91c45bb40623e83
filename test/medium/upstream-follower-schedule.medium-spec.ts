import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { pgPoolOf } from '@app/database';
import type { NatsRpcClient } from '@app/messaging';
import type { UpstreamFollowerService } from '../../apps/notifier/src/upstream/follow/upstream-follower.service';
import { openNotifierDatabase } from './support/notifier-database';
import { completedUpstreamTask, followStart, upstreamFollower } from './support/upstream-follows';

/** Counts the follower's claim rounds: the one statement that takes due rows. */
function countingClaims(dataSource: DataSource): { claims: () => number } {
  let claims = 0;
  const query = dataSource.query.bind(dataSource);
  dataSource.query = ((sql: string, parameters?: unknown[]) => {
    if (sql.includes('UPDATE "notifier"."upstream_tasks" SET "locked_until"')) claims += 1;
    return query(sql, parameters);
  }) as DataSource['query'];
  return { claims: () => claims };
}

describe('the upstream follower’s schedule against Postgres', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await openNotifierDatabase();
  });

  afterAll(async () => {
    await dataSource.destroy();
  });

  beforeEach(async () => {
    await dataSource.query(`DELETE FROM "notifier"."upstream_tasks"`);
  });

  const insertFollowing = async (nextPollIn: string, lockedFor: string | null): Promise<void> => {
    await dataSource.query(
      `INSERT INTO "notifier"."upstream_tasks" ("task_id", "recipient", "sender", "status", "reported", "next_poll_at", "poll_interval_ms", "locked_until")
       VALUES ($1, '{}', 'sender', 'following', '{}', now() + $2::interval, 250, CASE WHEN $3::text IS NULL THEN NULL ELSE now() + $3::interval END)`,
      [randomUUID(), nextPollIn, lockedFor],
    );
  };

  it('knows nothing is due when no task is followed (a finished one included)', async () => {
    await dataSource.query(
      `INSERT INTO "notifier"."upstream_tasks" ("task_id", "recipient", "sender", "status", "reported", "next_poll_at", "poll_interval_ms")
       VALUES ($1, '{}', 'sender', 'done', '{}', NULL, 250)`,
      [randomUUID()],
    );
    await expect(upstreamFollower(dataSource).nextDueMs()).resolves.toBeNull();
  });

  it('counts a due row held by another process from the end of its lease', async () => {
    await insertFollowing('-1 second', '30 seconds');
    const due = await upstreamFollower(dataSource).nextDueMs();
    expect(due).toBeGreaterThan(20_000);
    expect(due).toBeLessThanOrEqual(30_000);
  });

  it('takes the soonest next poll, and a row already due as due now', async () => {
    await insertFollowing('1 minute', null);
    await insertFollowing('2 seconds', '1 second');
    const soon = await upstreamFollower(dataSource).nextDueMs();
    expect(soon).toBeGreaterThan(0);
    expect(soon).toBeLessThanOrEqual(2_000);
    await insertFollowing('-5 seconds', '-1 second');
    await expect(upstreamFollower(dataSource).nextDueMs()).resolves.toBe(0);
  });

  it('sleeps between rounds while nothing is followed, or only a row another process holds', async () => {
    const counted = countingClaims(dataSource);
    const idle = upstreamFollower(dataSource);
    idle.onApplicationBootstrap();
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // At most one round per second while idle (a loop that does not sleep makes hundreds).
      expect(counted.claims()).toBeLessThanOrEqual(4);
      await insertFollowing('-1 second', '1 minute');
      const before = counted.claims();
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(counted.claims() - before).toBeLessThanOrEqual(4);
    } finally {
      await idle.onModuleDestroy();
    }
  });

  describe('ended follows', () => {
    /** What the tasks service is asked to apply; each report answered as made. */
    const reporting = (): { rpc: NatsRpcClient; reports: unknown[] } => {
      const reports: unknown[] = [];
      const rpc = {
        maxPayloadBytes: 1024 * 1024,
        request: async (_subject: string, payload: unknown) => {
          reports.push(payload);
          return { ended: false };
        },
      } as unknown as NatsRpcClient;
      return { rpc, reports };
    };
    /** Follows a delivered task whose answer ended it, and looks at that answer as the delivery does. */
    const deliverEnded = async (follower: UpstreamFollowerService): Promise<string> => {
      const taskId = randomUUID();
      const follow = follower.followWithAttempt(followStart(taskId), undefined, { answer: completedUpstreamTask(`up-${taskId}`) });
      const { name, text, values } = follow.insert(1);
      const { rows } = await pgPoolOf(dataSource).query({ name, text, values });
      await follow.written(rows[0])?.();
      return taskId;
    };
    const statusOf = async (taskIds: string[]): Promise<Array<{ status: string; locked: boolean }>> =>
      (await dataSource.query(
        `SELECT "status", "locked_until" IS NOT NULL AS "locked" FROM "notifier"."upstream_tasks" WHERE "task_id" = ANY($1) ORDER BY "task_id"`,
        [taskIds],
      )) as Array<{ status: string; locked: boolean }>;

    it('are written done, and let go of, once their reports are made', async () => {
      const { rpc, reports } = reporting();
      const follower = upstreamFollower(dataSource, rpc);
      try {
        const ended = [await deliverEnded(follower), await deliverEnded(follower)];
        expect(reports).toHaveLength(2);
        const deadline = Date.now() + 30_000;
        let rows = await statusOf(ended);
        while (rows.some((row) => row.status !== 'done') && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          rows = await statusOf(ended);
        }
        expect(rows.map((row) => [row.status, row.locked])).toEqual([
          ['done', false],
          ['done', false],
        ]);
      } finally {
        await follower.onModuleDestroy();
      }
    });

    it('are written at once when the process stops', async () => {
      const { rpc } = reporting();
      const follower = upstreamFollower(dataSource, rpc);
      const ended = await deliverEnded(follower);
      await follower.onModuleDestroy();
      expect((await statusOf([ended])).map((row) => row.status)).toEqual(['done']);
    });
  });
});
