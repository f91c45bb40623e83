import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { DEFAULT_CHAIN_LIMITS, type ParticipantRefDto, type SendRequest } from '@app/contracts';
import { createTask } from '../../apps/tasks/src/tasks/store/create-write';
import { RecentPairs } from '../../apps/tasks/src/tasks/store/recent-pairs';
import { openTasksDatabase, participant, rejectionOf, rowsOf, textParts, type TasksDatabase } from './support/tasks-database';

/** The pool, noting the name of each statement sent through it. */
function namingPool(pool: pg.Pool, names: string[]): pg.Pool {
  return new Proxy(pool, {
    get(target, property) {
      if (property === 'query')
        return (config: pg.QueryConfig, values?: unknown[]) => {
          names.push(config.name ?? config.text);
          return target.query(config, values);
        };
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

describe("the pair rate's count kept between creates", () => {
  let database: TasksDatabase;

  beforeAll(async () => {
    database = await openTasksDatabase();
  });

  afterAll(async () => {
    await database.close();
  });

  /** A root create from `sender` to `recipient` as a tasks process keeping `pairs` makes it, with the pair rate `limit`; the names of its statements. */
  async function create(
    pairs: RecentPairs,
    sender: ParticipantRefDto,
    recipient: ParticipantRefDto,
    limit: number,
  ): Promise<{ names: string[]; created: Promise<unknown> }> {
    const names: string[] = [];
    const request = { caller: sender, recipient, message: { message_id: randomUUID(), parts: textParts('did you see my last message?') } } as SendRequest;
    const created = createTask(
      namingPool(database.pool, names),
      request,
      [],
      randomUUID(),
      { ...DEFAULT_CHAIN_LIMITS, pairPerMinute: limit },
      undefined,
      undefined,
      pairs,
    );
    await created.catch(() => undefined);
    return { names, created };
  }

  const pairCount = async (sender: ParticipantRefDto, recipient: ParticipantRefDto): Promise<number> =>
    (
      await rowsOf<{ n: number }>(database, `SELECT count(*)::int AS "n" FROM "tasks"."tasks" WHERE "sender_id" = $1 AND "recipient_id" = $2`, [
        sender.id,
        recipient.id,
      ])
    )[0].n;

  it('reads the count before the first create of a pair only; the next ones send their create statement alone', async () => {
    const [ping, pong] = [participant('ping'), participant('pong')];
    const pairs = new RecentPairs();
    const names: string[][] = [];
    for (let i = 0; i < 3; i++) {
      const { names: sent, created } = await create(pairs, ping, pong, 10);
      await created;
      names.push(sent);
    }
    expect(names).toEqual([['tasks-pair-recent', 'tasks-create-task'], ['tasks-create-task'], ['tasks-create-task']]);
    expect(await pairCount(ping, pong)).toBe(3);
  });

  it("counts another writer's handoffs of the pair: a create that kept fewer writes nothing and is decided from a read, which refuses it at the limit", async () => {
    const [ping, pong] = [participant('ping'), participant('pong')];
    const [thisProcess, otherProcess] = [new RecentPairs(), new RecentPairs()];
    await (
      await create(thisProcess, ping, pong, 3)
    ).created;
    await (
      await create(thisProcess, ping, pong, 3)
    ).created;
    await (
      await create(otherProcess, ping, pong, 3)
    ).created;

    const refused = await create(thisProcess, ping, pong, 3);
    expect(refused.names).toEqual(['tasks-create-task', 'tasks-pair-recent']);
    const refusal = await rejectionOf(refused.created);
    expect(refusal).toMatchObject({ reason: 'pair_rate_limited', data: { limit: 3, limit_name: 'pair_per_minute', path: [ping.handle, pong.handle] } });
    expect(refusal.data?.retry_after_seconds).toBeGreaterThanOrEqual(1);
    expect(await pairCount(ping, pong)).toBe(3);

    // The pair is read before each create from now on.
    const again = await create(thisProcess, ping, pong, 3);
    expect(again.names).toEqual(['tasks-pair-recent']);
    expect(await rejectionOf(again.created)).toMatchObject({ reason: 'pair_rate_limited' });
    expect(await pairCount(ping, pong)).toBe(3);
  });

  it('writes a create whose kept count another writer overtook once the read lets it through', async () => {
    const [ping, pong] = [participant('ping'), participant('pong')];
    const [thisProcess, otherProcess] = [new RecentPairs(), new RecentPairs()];
    await (
      await create(thisProcess, ping, pong, 5)
    ).created;
    await (
      await create(otherProcess, ping, pong, 5)
    ).created;

    const moved = await create(thisProcess, ping, pong, 5);
    await moved.created;
    expect(moved.names).toEqual(['tasks-create-task', 'tasks-pair-recent', 'tasks-create-task']);
    expect(await pairCount(ping, pong)).toBe(3);
  });

  it('gives the kept count out to creates of one pair under way together up to the limit only; each is written whole or refused', async () => {
    const [ping, pong] = [participant('ping'), participant('pong')];
    const pairs = new RecentPairs();
    await (
      await create(pairs, ping, pong, 4)
    ).created;
    // Three more fit: the kept count gives out three places, and the other creates read the count.
    const together = await Promise.all(Array.from({ length: 8 }, () => create(pairs, ping, pong, 4)));
    expect(together.filter((attempt) => attempt.names[0] === 'tasks-create-task')).toHaveLength(3);
    expect(together.filter((attempt) => attempt.names[0] === 'tasks-pair-recent')).toHaveLength(5);
    const outcomes = await Promise.allSettled(together.map((attempt) => attempt.created));
    const refusals = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [(outcome.reason as { reason: string }).reason] : []));
    expect(new Set(refusals)).toEqual(new Set(refusals.length ? ['pair_rate_limited'] : []));
    expect(await pairCount(ping, pong)).toBe(1 + outcomes.length - refusals.length);
  });
});
