import { randomBytes, randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { ParticipantRefDto, SendRequest } from '@app/contracts';
import { LOCK_CREATE_GUARD_SQL } from '../../apps/tasks/src/tasks/store/sql/create-task.sql';
import { nextTaskId } from '../../apps/tasks/src/tasks/store/task-ids';
import { eventually } from '../support/eventually';
import { openTasksDatabase, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

/** The lock name the creates of `org` take when it has an open-handoffs quota. */
const lockNameOf = (org: string): string => `tasks.org_open_handoffs:${org}`;

/** The open-handoffs quota of an org at the create write path: exact under concurrent creates, and free for orgs without it. */
describe('the open-handoffs quota at the create write path', () => {
  let database: TasksDatabase;

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  function newOrg(name: string): { org: string; member: (name: string) => ParticipantRefDto } {
    const org = `${name}-${randomBytes(3).toString('hex')}`;
    return { org, member: (member) => ({ id: randomUUID(), handle: `${member}@${org}`, name: member, role: null }) };
  }

  const outsider = (): ParticipantRefDto => ({
    id: randomUUID(),
    handle: `recipient-${randomBytes(3).toString('hex')}@elsewhere`,
    name: 'Recipient',
    role: null,
  });

  const handOff = (sender: ParticipantRefDto, quota: number | undefined, extra: Partial<SendRequest> = {}): Promise<unknown> =>
    database.sendTask.send({
      caller: sender,
      recipient: outsider(),
      message: { parts: textParts('please look') },
      ...(quota === undefined ? {} : { sender_org_open_handoffs: quota }),
      ...extra,
    } as SendRequest);

  async function storedOf(org: string): Promise<number> {
    const [row] = await rowsOf<{ stored: number }>(
      database,
      `SELECT count(*)::int AS "stored" FROM "tasks"."tasks" WHERE split_part("sender_handle", '@', 2) = $1`,
      [org],
    );
    return row.stored;
  }

  /** Transactions waiting for the advisory lock named `name` (CreateGuard's). */
  async function waitingFor(name: string): Promise<number> {
    const [row] = await rowsOf<{ waiting: number }>(
      database,
      `SELECT count(*)::int AS "waiting" FROM pg_locks
       WHERE "locktype" = 'advisory' AND NOT "granted" AND "objsubid" = 1
         AND "objid"::bigint = (hashtextextended($1, 0) & 4294967295) AND "classid"::bigint = ((hashtextextended($1, 0) >> 32) & 4294967295)`,
      [name],
    );
    return row.waiting;
  }

  it('gives the last place of the quota to exactly one of many racing creates, and writes nothing for the others', async () => {
    const QUOTA = 3;
    const { org, member } = newOrg('racing');
    await handOff(member('first'), QUOTA);
    await handOff(member('second'), QUOTA);
    const racers = Array.from({ length: 8 }, (_, index) => member(`racer${index}`));
    const outcomes = await Promise.allSettled(racers.map((racer) => handOff(racer, QUOTA)));
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(1);
    const refusals = outcomes
      .filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected')
      .map((outcome) => {
        const { reason, data } = outcome.reason as { reason: string; data: unknown };
        return { reason, data };
      });
    expect(refusals).toEqual(Array(7).fill({ reason: 'org_quota_exceeded', data: { org, quota: 'open_handoffs', limit: QUOTA } }));
    expect(await storedOf(org)).toBe(QUOTA);
  });

  it('refuses, having written nothing, a create whose org’s last place was taken while it waited for the org’s lock', async () => {
    const QUOTA = 2;
    const { org, member } = newOrg('waiting');
    const sender = member('sender');
    await handOff(sender, QUOTA);
    const holder: pg.PoolClient = await database.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(LOCK_CREATE_GUARD_SQL, [lockNameOf(org)]);
      await holder.query(
        `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                     "summary", "created_at", "updated_at", "status_timestamp")
         VALUES ($1, $2, $3, $4, 'Sender', $5, 'recipient@elsewhere', 'Recipient', 'the last place', now(), now(), now())`,
        [nextTaskId(), randomUUID(), sender.id, sender.handle, randomUUID()],
      );
      const refused = rejectionOf(handOff(member('late'), QUOTA));
      await eventually(async () => expect(await waitingFor(lockNameOf(org))).toBe(1), 60000);
      await holder.query('COMMIT');
      expect(await refused).toMatchObject({ reason: 'org_quota_exceeded', data: { org, quota: 'open_handoffs', limit: QUOTA } });
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
    expect(await storedOf(org)).toBe(QUOTA);
  });

  it('takes no lock for an org without the quota: its creates pass while another transaction holds the name of its lock', async () => {
    const { org, member } = newOrg('free');
    const holder: pg.PoolClient = await database.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(LOCK_CREATE_GUARD_SQL, [lockNameOf(org)]);
      await Promise.all([handOff(member('a'), undefined), handOff(member('b'), undefined)]);
      expect(await storedOf(org)).toBe(2);
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      holder.release();
    }
  });
});
