import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { CALL_LOG_MAX_HELD, UpstreamCallLog } from '../../apps/notifier/src/upstream/health/upstream-call-log';
import type { ObservedCall } from '../../apps/notifier/src/upstream/health/upstream-calls';
import { openNotifierDatabase } from './support/notifier-database';

/** Counts the statements that write calls. */
function countingInserts(dataSource: DataSource): { inserts: () => number; failNext: (times: number) => void } {
  let inserts = 0;
  let failures = 0;
  const query = dataSource.query.bind(dataSource);
  dataSource.query = ((sql: string, parameters?: unknown[]) => {
    if (sql.includes('INSERT INTO "notifier"."upstream_calls"')) {
      if (failures > 0) {
        failures -= 1;
        return Promise.reject(new Error('connection terminated'));
      }
      inserts += 1;
    }
    return query(sql, parameters);
  }) as DataSource['query'];
  return { inserts: () => inserts, failNext: (times) => (failures = times) };
}

function callOf(taskId: string, index: number): ObservedCall & { taskId: string } {
  return {
    method: index % 2 === 0 ? 'SendMessage' : 'GetTask',
    outcome: index % 3 === 0 ? 'http_5xx' : 'ok',
    statusCode: index % 3 === 0 ? 503 : 200,
    durationMs: index,
    error: index % 3 === 0 ? 'HTTP 503' : null,
    taskId,
    at: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, index)),
  };
}

describe('the upstream call log against Postgres', () => {
  let dataSource: DataSource;

  beforeAll(async () => {
    dataSource = await openNotifierDatabase();
  });

  afterAll(async () => {
    await dataSource.destroy();
  });

  const stored = async (taskId: string) =>
    (await dataSource.query(
      `SELECT "handle", "method", "outcome", "status_code", "duration_ms", "error", "at" FROM "notifier"."upstream_calls" WHERE "task_id" = $1 ORDER BY "id"`,
      [taskId],
    )) as Array<{ handle: string; method: string; outcome: string; status_code: number | null; duration_ms: number; error: string | null; at: Date }>;

  it('writes the calls of a moment in one statement, each as it was and in the order they ended', async () => {
    const source = await openNotifierDatabase();
    try {
      const counted = countingInserts(source);
      const log = new UpstreamCallLog(source, () => undefined);
      const taskId = randomUUID();
      const calls = Array.from({ length: 40 }, (_, index) => callOf(taskId, index));
      for (const call of calls) log.add(`agent${calls.indexOf(call) % 2}@acme`, call);
      await log.write();
      expect(counted.inserts()).toBe(1);
      expect(await stored(taskId)).toEqual(
        calls.map((call, index) => ({
          handle: `agent${index % 2}@acme`,
          method: call.method,
          outcome: call.outcome,
          status_code: call.statusCode,
          duration_ms: call.durationMs,
          error: call.error,
          at: call.at,
        })),
      );
      await log.close();
    } finally {
      await source.destroy();
    }
  });

  it('writes on its own a moment after a call, without being asked; once closed takes no more', async () => {
    const log = new UpstreamCallLog(dataSource, () => undefined);
    const taskId = randomUUID();
    log.add('agent@acme', callOf(taskId, 1));
    const deadline = Date.now() + 30_000;
    while ((await stored(taskId)).length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await stored(taskId)).toHaveLength(1);
    await log.close();
    // Closed (its process stopping): a call that ends now is not kept.
    log.add('agent@acme', callOf(taskId, 2));
    await log.write();
    expect(await stored(taskId)).toHaveLength(1);
  });

  it('keeps the calls a failed write could not store and writes them with the next ones; at most CALL_LOG_MAX_HELD are held', async () => {
    const source = await openNotifierDatabase();
    try {
      const counted = countingInserts(source);
      const failures: number[] = [];
      const log = new UpstreamCallLog(source, (_error, calls) => failures.push(calls));
      const taskId = randomUUID();
      counted.failNext(1);
      log.add('agent@acme', callOf(taskId, 1));
      await log.write();
      expect(failures).toEqual([1]);
      expect(await stored(taskId)).toHaveLength(0);
      log.add('agent@acme', callOf(taskId, 2));
      await log.write();
      expect((await stored(taskId)).map((row) => row.duration_ms)).toEqual([1, 2]);

      const flooded = randomUUID();
      counted.failNext(1_000);
      for (let index = 0; index < CALL_LOG_MAX_HELD + 10; index++) log.add('agent@acme', callOf(flooded, index));
      await log.write();
      expect(log.droppedCalls).toBeGreaterThanOrEqual(10);
      counted.failNext(0);
      await log.write();
      const rows = await stored(flooded);
      expect(rows).toHaveLength(CALL_LOG_MAX_HELD);
      // The oldest went past the bound; the newest are all there, in order.
      expect(rows.at(-1)?.duration_ms).toBe(CALL_LOG_MAX_HELD + 9);
      await log.close();
    } finally {
      await source.destroy();
    }
  });
});
