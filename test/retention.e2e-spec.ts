import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { loadConfig } from '@app/config';
import { migrateServiceSchema } from '@app/database';
import { createMetricsRegistry, MetricsServer, RetentionMetrics } from '@app/metrics';
import { tasksDataSourceOptions } from '../apps/tasks/src/database/data-source';
import { TasksConfig } from '../apps/tasks/src/tasks.config';
import { TasksRetentionService } from '../apps/tasks/src/retention/retention.service';
import { DirectoryRetentionService } from '../apps/directory/src/retention/retention.service';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { rpc, rpcErrorFacts, type Json } from './support/json-rpc';
import { RelayHarness, TEST_NOTIFIER_PUBLIC_KEY, TEST_SECRET_KEYS } from './support/relay-harness';
import { PrometheusScrape } from './support/prometheus-text';
import { openSse, type SseStream } from './support/sse';
import { createTask } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';

const DAY = `interval '1 day'`;

/** Opens a stream and answers its first event's id (closing it), or fails with what it answered. */
async function firstId(stream: SseStream): Promise<string> {
  try {
    expect({ status: stream.status, error: stream.json?.error }).toEqual({ status: 200, error: undefined });
    const event = await stream.next();
    if (!event?.id) throw new Error('the stream ended without an event id');
    return event.id;
  } finally {
    stream.close();
  }
}

/** The details of a rendered error, in any dialect: `data` (AgentRelay, v0.3) or the v1.0 ErrorInfo's metadata. */
function details(error: unknown): Json {
  const data = (error as { data?: unknown }).data;
  return (Array.isArray(data) ? (data[0] as { metadata: Json }).metadata : data) as Json;
}

/**
 * Retention (docs/architecture.md#retention): every window deletes what is past it and keeps what is
 * inside it, a stream asked to resume from before the kept events is told so precisely, and the
 * deletes never hold up the hot path.
 */
describe('retention windows', () => {
  let relay: RelayHarness;
  let db: Client;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  const tasksRetention = (): TasksRetentionService => relay.services.get('tasks')![0].get(TasksRetentionService);
  const directoryRetention = (): DirectoryRetentionService => relay.services.get('directory')![0].get(DirectoryRetentionService);

  beforeAll(async () => {
    // Runs only when a test asks; terminal tasks are deleted after 30 days here (off by default).
    relay = await RelayHarness.start({ env: { RELAY_RETENTION_INTERVAL_MS: '3600000', RELAY_TERMINAL_TASK_RETENTION_DAYS: '30' } });
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    const org = `ret${randomUUID().slice(0, 6)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  const published = async (taskId: string): Promise<boolean> => {
    const { rows } = await db.query(
      `SELECT count(*) FILTER (WHERE "published_at" IS NULL)::int AS "waiting" FROM "tasks"."outbox_events" WHERE "task_id" = $1`,
      [taskId],
    );
    return rows[0].waiting === 0;
  };
  const outboxRows = async (taskId: string): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS "n" FROM "tasks"."outbox_events" WHERE "task_id" = $1`, [taskId])).rows[0].n;
  /** Ages every outbox row up to the task's newest one past the window (positions follow time, so the older ones too). */
  const ageOutboxThrough = async (taskId: string, days: number): Promise<void> => {
    await eventually(() => published(taskId), 30_000);
    await db.query(
      `UPDATE "tasks"."outbox_events" SET "created_at" = now() - ${days} * ${DAY}
       WHERE "position" <= (SELECT max("position") FROM "tasks"."outbox_events" WHERE "task_id" = $1)`,
      [taskId],
    );
  };

  const subscribe = (agent: RegisteredTestAgent, taskId: string, lastEventId?: string): Promise<SseStream> =>
    openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${agent.api_key}`, 'a2a-version': '1.0', ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 'sub', method: 'SubscribeToTask', params: { id: taskId } },
    );
  const watch = (agent: RegisteredTestAgent, lastEventId?: string): Promise<SseStream> =>
    openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${agent.api_key}`, ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} },
    );

  it('deletes published outbox events past the window and keeps the newer ones; a Last-Event-ID from before is events_expired on every binding', async () => {
    const old = await createTask(relay.url, alice, bob, 'An old handoff');
    const oldStreamId = await firstId(await subscribe(alice, old));
    const oldInboxId = await firstId(await watch(alice));
    // An event after the ids: once it is deleted too, the ids are older than every kept event.
    const accepted = await rpc(relay.url, bob.api_key, 'tasks/update', { task_id: old, transition: 'accept' });
    expect(accepted.body.error).toBeUndefined();
    await ageOutboxThrough(old, 8);
    const recent = await createTask(relay.url, alice, bob, 'A recent handoff');
    await eventually(() => published(recent), 30_000);

    const scrape = async (): Promise<PrometheusScrape> =>
      PrometheusScrape.parse(await (await fetch(`${relay.services.get('tasks')![0].get(MetricsServer).url}/metrics`)).text());
    const counted = (await scrape()).value('agentrelay_retention_deleted_rows_total', { table: 'tasks.outbox_events' });
    const deleted = await tasksRetention().runOnce();
    expect(deleted?.['tasks.outbox_events']).toBeGreaterThanOrEqual(1);
    expect((await scrape()).value('agentrelay_retention_deleted_rows_total', { table: 'tasks.outbox_events' })).toBe(counted + deleted!['tasks.outbox_events']);
    expect(await outboxRows(old)).toBe(0);
    expect(await outboxRows(recent)).toBe(1);

    // JSON-RPC, A2A v1.0: -32602 with the relay's reason, naming the header and the oldest id to resume after.
    const expired = await subscribe(alice, old, oldStreamId);
    expect(expired.status).toBe(200);
    expect(rpcErrorFacts(expired.json?.error)).toMatchObject({ code: -32602, reason: 'events_expired', field: 'Last-Event-ID', shape: 'error-info' });
    const oldest = details(expired.json?.error).oldest_event_id as string;
    expect(oldest).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(details(expired.json?.error)).not.toHaveProperty('oldest_position');
    // That id resumes the stream (every event after it is kept; this task has none left, so it waits for live ones).
    const resumed = await subscribe(alice, old, oldest);
    expect({ status: resumed.status, error: resumed.json?.error }).toEqual({ status: 200, error: undefined });
    resumed.close();

    // AgentRelay live inbox: its own code, -32026, with the oldest id in the inbox's own form.
    const inbox = await watch(alice, oldInboxId);
    expect(rpcErrorFacts(inbox.json?.error)).toMatchObject({ code: -32026, reason: 'events_expired', field: 'Last-Event-ID' });
    const inboxOldest = details(inbox.json?.error).oldest_event_id as string;
    expect(inboxOldest).not.toBe(oldest);
    const inboxResumed = await watch(alice, inboxOldest);
    expect((await inboxResumed.next())?.data.result).toMatchObject({ event: 'created', task_id: recent });
    inboxResumed.close();

    // HTTP+JSON: 400 INVALID_ARGUMENT, never a 5xx.
    const rest = await openSse(`${relay.url}/a2a/${bob.agent.handle}/tasks/${old}:subscribe`, { 'x-api-key': alice.api_key, 'last-event-id': oldStreamId }, {});
    expect(rest.status).toBe(400);
    expect(rest.json?.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(rest.json?.error.details[0].metadata).toMatchObject({
      relay_reason: 'events_expired',
      field: 'Last-Event-ID',
      oldest_event_id: oldest,
    });
  });

  it('starts a live inbox whose events are all gone (or that never had any) at the horizon, so its ready id resumes', async () => {
    const org = `ret${randomUUID().slice(0, 6)}`;
    const [carol, dave] = await Promise.all([
      registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' }),
      registerAgent(relay, { handle: uniqueHandle('dave', org), name: 'Dave' }),
    ]);
    const eve = await registerAgent(relay, { handle: uniqueHandle('eve', org), name: 'Eve' });
    const gone = await createTask(relay.url, carol, eve, 'Past the window');
    await ageOutboxThrough(gone, 8);
    await tasksRetention().runOnce();
    expect(await outboxRows(gone)).toBe(0);
    for (const agent of [carol, dave]) {
      const ready = await firstId(await watch(agent));
      const resumed = await watch(agent, ready);
      expect({ status: resumed.status, error: resumed.json?.error }).toEqual({ status: 200, error: undefined });
      resumed.close();
    }
  });

  it('skips an old event another transaction holds instead of waiting for it, and deletes it on a later run', async () => {
    const held = await createTask(relay.url, alice, bob, 'Held by a long transaction');
    await ageOutboxThrough(held, 8);
    const holder = new Client({ connectionString: testDatabaseUrl() });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "tasks"."outbox_events" WHERE "task_id" = $1 FOR UPDATE`, [held]);
      // The run ends while the row is held: it skipped the row rather than waited on it.
      const skipped = await tasksRetention().runOnce();
      expect(skipped).toBeDefined();
      expect(await outboxRows(held)).toBe(1);
      await holder.query('COMMIT');
    } finally {
      await holder.end();
    }
    await tasksRetention().runOnce();
    expect(await outboxRows(held)).toBe(0);
  });

  it('keeps an idempotency key for its window (a retry is the same task) and forgets it after (a retry is a new task)', async () => {
    const key = `retry-${randomUUID()}`;
    const send = async (): Promise<Json> => {
      const response = await rpc(relay.url, alice.api_key, 'message/send', {
        task_id: null,
        recipient: bob.agent.handle,
        metadata: { client_idempotency_key: key },
        message: { role: 'user', parts: [{ type: 'text', text: 'Exactly once, please' }] },
      });
      expect(response.body.error).toBeUndefined();
      return response.body.result as Json;
    };
    const first = await send();
    await db.query(`UPDATE "tasks"."idempotency_keys" SET "created_at" = now() - 6 * ${DAY} WHERE "key" = $1`, [key]);
    await tasksRetention().runOnce();
    const inside = await send();
    expect(inside.task_id).toBe(first.task_id);

    await db.query(`UPDATE "tasks"."idempotency_keys" SET "created_at" = now() - 8 * ${DAY} WHERE "key" = $1`, [key]);
    const deleted = await tasksRetention().runOnce();
    expect(deleted?.['tasks.idempotency_keys']).toBeGreaterThanOrEqual(1);
    const after = await send();
    expect(after.task_id).not.toBe(first.task_id);
  });

  it('deletes audit rows past 400 days in the tasks audit log and the directory admin audit, and keeps the younger ones', async () => {
    const task = await createTask(relay.url, alice, bob, 'Audited');
    const audit = async (): Promise<string[]> =>
      (await db.query(`SELECT "transition" FROM "tasks"."audit_log" WHERE "task_id" = $1 ORDER BY "id"`, [task])).rows.map((row) => row.transition as string);
    const accepted = await rpc(relay.url, bob.api_key, 'tasks/update', { task_id: task, transition: 'accept' });
    expect(accepted.body.error).toBeUndefined();
    expect(await audit()).toEqual(['create', 'accept']);
    // Everything up to the create is past the window; the accept is a day inside it.
    const { rows } = await db.query(`SELECT min("id") AS "create", max("id") AS "accept" FROM "tasks"."audit_log" WHERE "task_id" = $1`, [task]);
    await db.query(`UPDATE "tasks"."audit_log" SET "at" = now() - 401 * ${DAY} WHERE "id" <= $1`, [rows[0].create]);
    await db.query(`UPDATE "tasks"."audit_log" SET "at" = now() - 399 * ${DAY} WHERE "id" = $1`, [rows[0].accept]);

    const carol = await registerAgent(relay, { handle: uniqueHandle('carol', 'retaudit'), name: 'Carol' });
    const directoryAudit = async (): Promise<number> =>
      (await db.query(`SELECT count(*)::int AS "n" FROM "directory"."admin_audit" WHERE "detail"->>'handle' = $1`, [carol.agent.handle])).rows[0].n;
    expect(await directoryAudit()).toBeGreaterThan(0);
    const { rows: newest } = await db.query(`SELECT max("id") AS "id" FROM "directory"."admin_audit"`);
    await db.query(`UPDATE "directory"."admin_audit" SET "at" = now() - 401 * ${DAY} WHERE "id" <= $1`, [newest[0].id]);
    const younger = await registerAgent(relay, { handle: uniqueHandle('dave', 'retaudit'), name: 'Dave' });

    const tasksDeleted = await tasksRetention().runOnce();
    expect(tasksDeleted?.['tasks.audit_log']).toBeGreaterThanOrEqual(1);
    expect(await audit()).toEqual(['accept']);
    // The directory's agent events (carol's registration), published and past the outbox window, go too.
    const agentEvents = async (handle: string): Promise<number> =>
      (await db.query(`SELECT count(*)::int AS "n" FROM "directory"."outbox_events" WHERE "payload"->>'handle' = $1 AND "published_at" IS NOT NULL`, [handle]))
        .rows[0].n;
    await eventually(async () => (await agentEvents(carol.agent.handle)) > 0 && (await agentEvents(younger.agent.handle)) > 0, 30_000);
    await db.query(
      `UPDATE "directory"."outbox_events" SET "created_at" = now() - 8 * ${DAY}
       WHERE "position" <= (SELECT max("position") FROM "directory"."outbox_events" WHERE "payload"->>'handle' = $1)`,
      [carol.agent.handle],
    );
    const directoryDeleted = await directoryRetention().runOnce();
    expect(directoryDeleted?.['directory.admin_audit']).toBeGreaterThanOrEqual(1);
    expect(directoryDeleted?.['directory.outbox_events']).toBeGreaterThanOrEqual(1);
    expect(await agentEvents(carol.agent.handle)).toBe(0);
    expect(await agentEvents(younger.agent.handle)).toBeGreaterThan(0);
    expect(await directoryAudit()).toBe(0);
    const { rows: kept } = await db.query(`SELECT count(*)::int AS "n" FROM "directory"."admin_audit" WHERE "detail"->>'handle' = $1`, [younger.agent.handle]);
    expect(kept[0].n).toBeGreaterThan(0);
  });

  it('deletes a task terminal for longer than its window with its messages, keys, audit and events, and keeps younger and open tasks', async () => {
    const update = async (agent: RegisteredTestAgent, taskId: string, transition: string): Promise<void> => {
      const response = await rpc(relay.url, agent.api_key, 'tasks/update', { task_id: taskId, transition });
      expect(response.body.error).toBeUndefined();
    };
    const done = await createTask(relay.url, alice, bob, 'Done long ago', { metadata: { client_idempotency_key: `done-${randomUUID()}` } });
    await update(bob, done, 'accept');
    await update(bob, done, 'complete');
    const declined = await createTask(relay.url, alice, bob, 'Declined lately');
    await update(bob, declined, 'decline');
    const open = await createTask(relay.url, alice, bob, 'Still open');
    for (const task of [done, declined, open]) await eventually(() => published(task), 30_000);
    await db.query(`UPDATE "tasks"."tasks" SET "status_timestamp" = now() - 31 * ${DAY} WHERE "id" = ANY($1)`, [[done, open]]);
    await db.query(`UPDATE "tasks"."tasks" SET "status_timestamp" = now() - 29 * ${DAY} WHERE "id" = $1`, [declined]);

    const deleted = await tasksRetention().runOnce();
    expect(deleted?.['tasks.tasks']).toBeGreaterThanOrEqual(1);
    const left = async (table: string, taskId: string): Promise<number> =>
      (await db.query(`SELECT count(*)::int AS "n" FROM "tasks"."${table}" WHERE "${table === 'tasks' ? 'id' : 'task_id'}" = $1`, [taskId])).rows[0].n;
    for (const table of ['tasks', 'messages', 'idempotency_keys', 'audit_log', 'outbox_events'])
      expect({ table, rows: await left(table, done) }).toEqual({ table, rows: 0 });
    expect(await left('tasks', declined)).toBe(1);
    expect(await left('tasks', open)).toBe(1);
    const read = await rpc(relay.url, alice.api_key, 'tasks/get', { task_id: done });
    expect(rpcErrorFacts(read.body.error)).toMatchObject({ reason: 'thread_not_found' });
  });
});

/**
 * A big delete (tens of thousands of old published events) runs in batches while agents keep
 * creating tasks: every create succeeds, and its event is published, while the delete goes on.
 */
describe('retention beside the hot path', () => {
  const SEEDED = 60_000;
  let relay: RelayHarness;
  let db: Client;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_RETENTION_INTERVAL_MS: '3600000', RELAY_RETENTION_BATCH_SIZE: '500', RELAY_RETENTION_PAUSE_MS: '20' } });
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    // Old published events: everything already in the outbox (earlier test files share this database) and the seeded ones.
    await db.query(`UPDATE "tasks"."outbox_events" SET "created_at" = now() - 30 * ${DAY} WHERE "published_at" IS NOT NULL`);
    await db.query(
      `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "published_at")
       SELECT gen_random_uuid(), 'relay.events.task.created', 'created', 'SEED' || i, jsonb_build_object('sender', 'old@seed', 'recipient', 'older@seed'),
              now() - 30 * ${DAY}, now() - 30 * ${DAY}
       FROM generate_series(1, ${SEEDED}) i`,
    );
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('keeps every create succeeding, and its event published, while a big delete runs', async () => {
    const org = `hot${randomUUID().slice(0, 6)}`;
    const alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    const seededLeft = async (): Promise<number> =>
      (await db.query(`SELECT count(*)::int AS "n" FROM "tasks"."outbox_events" WHERE "task_id" LIKE 'SEED%'`)).rows[0].n;

    let finished = false;
    const run = relay.services
      .get('tasks')![0]
      .get(TasksRetentionService)
      .runOnce()
      .finally(() => (finished = true));
    const created: string[] = [];
    const seenWhileDeleting: number[] = [];
    while (!finished) {
      created.push(await createTask(relay.url, alice, bob, `Created during the delete, #${created.length}`));
      if (!finished) seenWhileDeleting.push(await seededLeft());
    }
    const deleted = await run;

    expect(deleted?.['tasks.outbox_events']).toBeGreaterThanOrEqual(SEEDED);
    expect(await seededLeft()).toBe(0);
    // The creates overlapped the delete: they saw it partway, more than once.
    expect(seenWhileDeleting.filter((left) => left > 0 && left < SEEDED).length).toBeGreaterThan(1);
    for (const task of created)
      await eventually(
        async () => (await db.query(`SELECT 1 FROM "tasks"."outbox_events" WHERE "task_id" = $1 AND "published_at" IS NOT NULL`, [task])).rowCount === 1,
        30_000,
      );
  }, 300_000);
});

/**
 * Only published events may go: an old event the outbox relay has not published yet is still owed
 * to the stream. No relay runs here (no tasks service), so the event stays unpublished while the
 * tasks service's retention, built on this database, runs.
 */
describe('retention and unpublished events', () => {
  let dataSource: DataSource;
  let db: Client;
  const taskId = `UNPUB${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    dataSource = await new DataSource(tasksDataSourceOptions(testDatabaseUrl())).initialize();
    await migrateServiceSchema(dataSource);
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await db?.query(`DELETE FROM "tasks"."outbox_events" WHERE "task_id" = $1`, [taskId]).catch(() => undefined);
    await db?.end();
    await dataSource?.destroy();
  });

  it('keeps an old event that is not published yet and deletes the published one beside it', async () => {
    const config = loadConfig(TasksConfig, {
      RELAY_SECRET_KEYS: TEST_SECRET_KEYS,
      RELAY_NOTIFIER_PUBLIC_KEY: TEST_NOTIFIER_PUBLIC_KEY,
      DATABASE_URL: testDatabaseUrl(),
    });
    const retention = new TasksRetentionService(dataSource, config, new RetentionMetrics(createMetricsRegistry()));
    // Whatever earlier test files left in this database counts as old and published, so the batch walks past it.
    await db.query(`UPDATE "tasks"."outbox_events" SET "created_at" = now() - 30 * ${DAY}, "published_at" = COALESCE("published_at", now())`);
    await db.query(
      `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "published_at")
       VALUES (gen_random_uuid(), 'relay.events.task.created', 'created', $1, '{"note": "unpublished"}', now() - 30 * ${DAY}, NULL),
              (gen_random_uuid(), 'relay.events.task.accepted', 'accepted', $1, '{"note": "published"}', now() - 30 * ${DAY}, now() - 30 * ${DAY})`,
      [taskId],
    );
    const deleted = await retention.runOnce();
    expect(deleted?.['tasks.outbox_events']).toBeGreaterThanOrEqual(1);
    const { rows } = await db.query(`SELECT "payload"->>'note' AS "note" FROM "tasks"."outbox_events" WHERE "task_id" = $1`, [taskId]);
    expect(rows).toEqual([{ note: 'unpublished' }]);
  });
});

/** Nobody calls the retention here: it runs on its own schedule, with two tasks replicas taking turns at the lock. */
describe('retention on its schedule', () => {
  let relay: RelayHarness;
  let db: Client;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_RETENTION_INTERVAL_MS: '300' } });
    await relay.startService('tasks');
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  }, 120_000);

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('deletes an idempotency key past its window without being asked', async () => {
    const org = `sch${randomUUID().slice(0, 6)}`;
    const alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    const key = `scheduled-${randomUUID()}`;
    await createTask(relay.url, alice, bob, 'Scheduled', { metadata: { client_idempotency_key: key } });
    const keys = async (): Promise<number> => (await db.query(`SELECT count(*)::int AS "n" FROM "tasks"."idempotency_keys" WHERE "key" = $1`, [key])).rows[0].n;
    expect(await keys()).toBe(1);
    await db.query(`UPDATE "tasks"."idempotency_keys" SET "created_at" = now() - 8 * ${DAY} WHERE "key" = $1`, [key]);
    await eventually(async () => (await keys()) === 0, 30_000);
  });
});
