import { randomBytes, randomUUID } from 'node:crypto';
import type { ParticipantRefDto, SendRequest } from '@app/contracts';
import { DELETE_TERMINAL_TASKS_BATCH_SQL } from '../../apps/tasks/src/retention/retention-sql';
import { createTask, openTasksDatabase, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

/** An agent of an org no other test uses. */
function agentOf(org: string, name: string): ParticipantRefDto {
  return { id: randomUUID(), handle: `${name}@${org}`, name, role: null };
}

function newOrg(): string {
  return `bytes-${randomBytes(4).toString('hex')}`;
}

describe('stored bytes per org at the write paths', () => {
  let database: TasksDatabase;

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  /** The org's counter (the sum of its shards). */
  async function counted(org: string): Promise<number> {
    const [row] = await rowsOf<{ bytes: string }>(
      database,
      `SELECT COALESCE(sum("bytes"), 0)::text AS "bytes" FROM "tasks"."org_stored_bytes" WHERE "org" = $1`,
      [org],
    );
    return Number(row.bytes);
  }

  /** The bytes of the messages the org's agents wrote. */
  async function messageBytesFrom(org: string): Promise<number> {
    const [row] = await rowsOf<{ bytes: string }>(
      database,
      `SELECT COALESCE(sum(m."size_bytes"), 0)::text AS "bytes" FROM "tasks"."messages" m WHERE split_part(m."from_handle", '@', 2) = $1`,
      [org],
    );
    return Number(row.bytes);
  }

  /** The bytes of the messages the org's agents wrote, and of the artifacts of the handoffs they received (every artifact here is the recipient's). */
  async function messageAndArtifactBytes(org: string): Promise<number> {
    const [row] = await rowsOf<{ bytes: string }>(
      database,
      `SELECT (COALESCE((SELECT sum(m."size_bytes") FROM "tasks"."messages" m WHERE split_part(m."from_handle", '@', 2) = $1), 0)
        + COALESCE((SELECT sum(a."size_bytes") FROM "tasks"."artifacts" a JOIN "tasks"."tasks" t ON t."id" = a."task_id"
                    WHERE split_part(t."recipient_handle", '@', 2) = $1), 0))::text AS "bytes"`,
      [org],
    );
    return Number(row.bytes);
  }

  it('counts what each party writes to its own org: the create to the sender, the recipient’s messages and artifacts to the recipient', async () => {
    const [web, payments] = [newOrg(), newOrg()];
    const [frank, ana] = [agentOf(web, 'frank'), agentOf(payments, 'ana')];
    const task = await createTask(database, frank, ana);
    await database.transitionTask.transition({ caller_id: ana.id, task_id: task.id, transition: 'accept' });
    await database.sendTask.send({ caller: ana, task_id: task.id, message: { parts: textParts('x'.repeat(500)) } } as SendRequest);
    await database.transitionTask.transition({
      caller_id: ana.id,
      task_id: task.id,
      transition: 'progress',
      artifacts: [{ artifact_id: 'report', parts: textParts('y'.repeat(300)) }],
    } as never);
    await database.transitionTask.transition({
      caller_id: ana.id,
      task_id: task.id,
      transition: 'progress',
      artifacts: [{ artifact_id: 'report', append: true, parts: textParts('z'.repeat(200)) }],
    } as never);
    await database.sendTask.send({ caller: frank, task_id: task.id, message: { parts: textParts('thanks') } } as SendRequest);

    expect(await counted(web)).toBe(await messageBytesFrom(web));
    expect(await counted(payments)).toBe(await messageAndArtifactBytes(payments));
    expect(await counted(payments)).toBeGreaterThan(1000);
    expect(await counted(web)).toBeGreaterThan(0);
  });

  it('lets exactly the writes that fit the quota through when many race for it, counts each once, and stores nothing of the refused', async () => {
    const [busy, other] = [newOrg(), newOrg()];
    const [sender, recipient] = [agentOf(other, 'sender'), agentOf(busy, 'worker')];
    const task = await createTask(database, sender, recipient);
    await database.transitionTask.transition({ caller_id: recipient.id, task_id: task.id, transition: 'accept' });
    const tasks = [task.id];
    for (let i = 0; i < 3; i++) {
      const more = await createTask(database, sender, recipient);
      await database.transitionTask.transition({ caller_id: recipient.id, task_id: more.id, transition: 'accept' });
      tasks.push(more.id);
    }
    // One message's stored size, measured on one write before the quota is set.
    await database.sendTask.send({ caller: recipient, task_id: task.id, message: { parts: textParts('m'.repeat(1000)) } } as SendRequest);
    const one = await counted(busy);
    const places = 7;
    database.storedBytes.limits.set(busy, one * (1 + places));

    const writes = Array.from({ length: 24 }, (_, i) =>
      database.sendTask.send({ caller: recipient, task_id: tasks[i % tasks.length], message: { parts: textParts('m'.repeat(1000)) } } as SendRequest).then(
        () => 'stored',
        (error: { reason?: string }) => error.reason ?? String(error),
      ),
    );
    const outcomes = await Promise.all(writes);
    expect(outcomes.filter((outcome) => outcome === 'stored')).toHaveLength(places);
    expect(outcomes.filter((outcome) => outcome !== 'stored')).toEqual(Array(24 - places).fill('org_quota_exceeded'));
    expect(await counted(busy)).toBe(one * (1 + places));
    expect(await messageAndArtifactBytes(busy)).toBe(one * (1 + places));

    const refusal = await rejectionOf(
      database.sendTask.send({ caller: recipient, task_id: task.id, message: { parts: textParts('one more') } } as SendRequest),
    );
    expect(refusal).toMatchObject({ reason: 'org_quota_exceeded', data: { org: busy, quota: 'stored_bytes', limit: one * (1 + places) } });
    // The sender's org has no quota: its writes go on.
    await database.sendTask.send({ caller: sender, task_id: task.id, message: { parts: textParts('m'.repeat(1000)) } } as SendRequest);
    // A state change adds no bytes and is never refused.
    await database.transitionTask.transition({ caller_id: recipient.id, task_id: task.id, transition: 'complete' });
  });

  it('refuses a create of an org at its quota, having written nothing, and counts racing writes of an org without a quota exactly', async () => {
    const [full, free] = [newOrg(), newOrg()];
    const [a, b] = [agentOf(full, 'a'), agentOf(free, 'b')];
    database.storedBytes.limits.set(full, 10);
    const refusal = await rejectionOf(createTask(database, a, b));
    expect(refusal).toMatchObject({ reason: 'org_quota_exceeded', data: { org: full, quota: 'stored_bytes', limit: 10 } });
    expect(await rowsOf(database, `SELECT 1 FROM "tasks"."tasks" WHERE "sender_id" = $1`, [a.id])).toHaveLength(0);
    expect(await counted(full)).toBe(0);

    const tasks = await Promise.all(Array.from({ length: 4 }, () => createTask(database, b, a)));
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        database.sendTask.send({ caller: b, task_id: tasks[i % 4].id, message: { parts: textParts(`n${i}`.repeat(20 + i)) } } as SendRequest),
      ),
    );
    const [row] = await rowsOf<{ bytes: string }>(
      database,
      `SELECT sum(m."size_bytes")::text AS "bytes" FROM "tasks"."messages" m WHERE m."from_handle" = $1`,
      [b.handle],
    );
    expect(await counted(free)).toBe(Number(row.bytes));
  });

  it('takes a deleted task’s bytes off both parties’ orgs (retention)', async () => {
    const [web, payments] = [newOrg(), newOrg()];
    const [frank, ana] = [agentOf(web, 'frank'), agentOf(payments, 'ana')];
    const kept = await createTask(database, frank, ana);
    const doomed = await createTask(database, frank, ana);
    await database.transitionTask.transition({ caller_id: ana.id, task_id: doomed.id, transition: 'accept' });
    await database.sendTask.send({ caller: ana, task_id: doomed.id, message: { parts: textParts('done'.repeat(50)) } } as SendRequest);
    await database.transitionTask.transition({ caller_id: ana.id, task_id: doomed.id, transition: 'complete' });
    const [webBefore, paymentsBefore] = [await counted(web), await counted(payments)];
    expect(paymentsBefore).toBeGreaterThan(0);

    // Retention's delete, on this task alone: it ended long ago and its events were published.
    await rowsOf(database, `UPDATE "tasks"."tasks" SET "status_timestamp" = '2001-01-01' WHERE "id" = $1`, [doomed.id]);
    await rowsOf(database, `UPDATE "tasks"."outbox_events" SET "published_at" = now() WHERE "task_id" = $1`, [doomed.id]);
    const [deleted] = await rowsOf<{ tasks: number }>(database, DELETE_TERMINAL_TASKS_BATCH_SQL, [new Date('2001-01-02'), 500]);
    expect(deleted.tasks).toBe(1);
    expect(await rowsOf(database, `SELECT 1 FROM "tasks"."tasks" WHERE "id" = $1`, [doomed.id])).toHaveLength(0);
    const [keptBytes] = await rowsOf<{ bytes: string }>(database, `SELECT sum("size_bytes")::text AS "bytes" FROM "tasks"."messages" WHERE "task_id" = $1`, [
      kept.id,
    ]);
    expect(await counted(web)).toBe(Number(keptBytes.bytes));
    expect(await counted(payments)).toBe(0);
    expect(webBefore).toBeGreaterThan(Number(keptBytes.bytes));
  });
});
