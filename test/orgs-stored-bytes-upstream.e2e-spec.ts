import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AGENT_LIMITS } from '@app/contracts';
import { migrateServiceSchema } from '@app/database';
import { MetricsServer } from '@app/metrics';
import { tasksDataSourceOptions } from '../apps/tasks/src/database/data-source';
import { TASKS_MIGRATIONS } from '../apps/tasks/src/database/migrations';
import { OrgStoredBytes1765870000000 } from '../apps/tasks/src/database/migrations/1765870000000-OrgStoredBytes';
import { registerAgent, setTrust, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, rpc, type RpcResponse } from './support/json-rpc';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

function uniqueOrg(name: string): string {
  return `${name}-${randomBytes(3).toString('hex')}`;
}

async function scrapeOf(relay: RelayHarness, service: 'tasks' | 'notifier'): Promise<PrometheusScrape> {
  const app = relay.services.get(service)![0];
  return PrometheusScrape.parse(await (await fetch(`${app.get(MetricsServer).url}/metrics`)).text());
}

describe('org quotas: stored bytes and upstream deliveries in flight', () => {
  let relay: RelayHarness;
  let db: Client;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_UPSTREAM_POLL_MIN_MS: '100', RELAY_UPSTREAM_POLL_MAX_MS: '1000' } });
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await db?.end();
    await relay?.stop();
  });

  /** The org's stored bytes as the relay counts them, and as its agents' stored messages and artifacts add up. */
  async function storedBytesOf(org: string): Promise<{ counted: number; written: number }> {
    const { rows } = await db.query<{ counted: string; written: string }>(
      `SELECT (SELECT COALESCE(sum("bytes"), 0) FROM "tasks"."org_stored_bytes" WHERE "org" = $1)::text AS "counted",
              ((SELECT COALESCE(sum(m."size_bytes"), 0) FROM "tasks"."messages" m WHERE split_part(m."from_handle", '@', 2) = $1)
               + (SELECT COALESCE(sum(a."size_bytes"), 0) FROM "tasks"."artifacts" a JOIN "tasks"."tasks" t ON t."id" = a."task_id"
                  WHERE split_part(t."recipient_handle", '@', 2) = $1))::text AS "written"`,
      [org],
    );
    return { counted: Number(rows[0].counted), written: Number(rows[0].written) };
  }

  async function storedBy(agent: RegisteredTestAgent): Promise<{ tasks: number; messages: number }> {
    const { rows } = await db.query<{ tasks: number; messages: number }>(
      `SELECT (SELECT count(*)::int FROM "tasks"."tasks" WHERE "sender_id" = $1) AS "tasks",
              (SELECT count(*)::int FROM "tasks"."messages" WHERE "author_id" = $1) AS "messages"`,
      [agent.agent.id],
    );
    return rows[0];
  }

  it('validates the new quotas on the admin API, naming the field', async () => {
    const bad = await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: uniqueOrg('bad'), quotas: { stored_bytes: -1, upstream_in_flight: 0 } })
      .expect(400);
    expect((bad.body.error.fields as Array<{ field: string }>).map((field) => field.field).sort()).toEqual([
      'quotas.stored_bytes',
      'quotas.upstream_in_flight',
    ]);
    const org = uniqueOrg('good');
    const created = await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: org, quotas: { stored_bytes: 1_000_000, upstream_in_flight: 3 } })
      .expect(201);
    expect(created.body.quotas).toEqual({ agents: null, requests_per_minute: null, open_handoffs: null, stored_bytes: 1_000_000, upstream_in_flight: 3 });
    const patched = await request(relay.url)
      .patch(`/admin/orgs/${org}`)
      .set(admin)
      .send({ quotas: { stored_bytes: 'lots' } })
      .expect(400);
    expect((patched.body.error.fields as Array<{ field: string }>).map((field) => field.field)).toEqual(['quotas.stored_bytes']);
    const cleared = await request(relay.url)
      .patch(`/admin/orgs/${org}`)
      .set(admin)
      .send({ quotas: { stored_bytes: null } })
      .expect(200);
    expect(cleared.body.quotas).toMatchObject({ stored_bytes: null, upstream_in_flight: 3 });
  });

  it('refuses a write that would take the org past its stored bytes, in every binding, storing nothing; another org writes on; cleared, it writes again', async () => {
    const org = uniqueOrg('bytes');
    const limit = 6000;
    await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: org, quotas: { stored_bytes: limit } })
      .expect(201);
    const writer = await registerAgent(relay, { handle: `writer@${org}`, name: 'Writer' });
    const otherOrg = uniqueOrg('roomy');
    const outsider = await registerAgent(relay, { handle: `outsider@${otherOrg}`, name: 'Outsider' });
    const recipient = await registerAgent(relay, { handle: `recipient@${otherOrg}`, name: 'Recipient' });
    await setTrust(relay, recipient.agent.handle, { allow: [`*@${org}`] });
    const text = 'x'.repeat(1000);
    const handOffA2a = (from: RegisteredTestAgent, words: string): Promise<RpcResponse> =>
      rpc(
        relay.url,
        from.api_key,
        'message/send',
        { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: words }] }, configuration: { blocking: false } },
        { path: `/a2a/${recipient.agent.handle}` },
      );

    // Handoffs of the org's agent until the quota refuses one: the bytes of the ones stored stay within it.
    const stored: string[] = [];
    let refused: RpcResponse | undefined;
    for (let attempt = 0; attempt < 10 && !refused; attempt++) {
      const sent = await handOffA2a(writer, text);
      if (sent.body.error) refused = sent;
      else stored.push((sent.body.result as { id: string }).id);
    }
    expect(stored.length).toBeGreaterThanOrEqual(1);
    expect(refused?.status).toBe(409);
    expect(refused?.body.error).toMatchObject({ code: -32046, data: { org, quota: 'stored_bytes', limit } });
    expect(refused?.body.error?.message).toBe(`The org ${org} is at its quota of ${limit} stored bytes`);
    const before = await storedBy(writer);
    expect(before.tasks).toBe(stored.length);
    const bytes = await storedBytesOf(org);
    expect(bytes.counted).toBe(bytes.written);
    expect(bytes.counted).toBeLessThanOrEqual(limit);

    // The AgentRelay dialect, HTTP+JSON, and an append to a stored handoff: each refused, nothing stored.
    const relayDialect = await rpc(relay.url, writer.api_key, 'message/send', {
      recipient: recipient.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text }] },
    });
    expect(relayDialect.status).toBe(409);
    expect(relayDialect.body.error).toMatchObject({ code: -32046, data: { reason: 'org_quota_exceeded', org, quota: 'stored_bytes', limit } });
    const rest = await request(relay.url)
      .post(`/a2a/${recipient.agent.handle}/message:send`)
      .set({ 'x-api-key': writer.api_key, 'a2a-version': '1.0' })
      .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }] }, configuration: { returnImmediately: true } });
    expect(rest.status).toBe(409);
    expect(JSON.stringify(rest.body)).toContain('stored_bytes');
    const append = await rpc(relay.url, writer.api_key, 'message/send', { task_id: stored[0], message: { role: 'user', parts: [{ type: 'text', text }] } });
    expect(append.body.error).toMatchObject({ code: -32046, data: { org, quota: 'stored_bytes', limit } });
    expect(await storedBy(writer)).toEqual(before);
    expect(await storedBytesOf(org)).toEqual(bytes);

    // The other org's agents write on: the recipient answers the org's handoff, its teammate hands off.
    await ok(relay.url, recipient.api_key, 'tasks/update', { task_id: stored[0], transition: 'accept' });
    await ok(relay.url, recipient.api_key, 'message/send', { task_id: stored[0], message: { role: 'agent', parts: [{ type: 'text', text }] } });
    await createTask(relay.url, outsider, recipient, text);
    expect(await storedBytesOf(org)).toEqual(bytes);

    const scrape = await scrapeOf(relay, 'tasks');
    expect(scrape.value('agentrelay_org_quota_rejections_total', { org, quota: 'stored_bytes' })).toBe(4);

    await request(relay.url)
      .patch(`/admin/orgs/${org}`)
      .set(admin)
      .send({ quotas: { stored_bytes: null } })
      .expect(200);
    await eventually(async () => expect((await handOffA2a(writer, text)).body.error).toBeUndefined(), 30_000);
    const after = await storedBytesOf(org);
    expect(after.counted).toBe(after.written);
    expect(after.counted).toBeGreaterThan(limit);
  }, 120_000);

  it('applies no answer of an upstream agent whose org is at its stored bytes, and applies it once the org has room', async () => {
    const org = uniqueOrg('upbytes');
    await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: org, quotas: { stored_bytes: 1 } })
      .expect(201);
    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(upstream);
    const worker = `echo@${org}`;
    await request(relay.url)
      .post('/admin/agents')
      .set(admin)
      .send({ handle: worker, name: 'Echo', upstream: { card_url: upstream.cardUrl } })
      .expect(201);
    const senderOrg = uniqueOrg('asker');
    const asker = await registerAgent(relay, { handle: `asker@${senderOrg}`, name: 'Asker' });
    await setTrust(relay, worker, { allow: [`*@${senderOrg}`] });
    // The handoff's bytes are the sender's org's: it is stored and delivered.
    const taskId = await createTask(relay.url, asker, { agent: { handle: worker } } as RegisteredTestAgent, 'hello');
    await eventually(() => expect(upstream.tasksCreated).toHaveLength(1), 60_000);
    const written = async (): Promise<number> =>
      (await db.query<{ count: number }>(`SELECT count(*)::int AS "count" FROM "tasks"."messages" WHERE "task_id" = $1 AND "author" = 'recipient'`, [taskId]))
        .rows[0].count;
    await eventually(
      async () =>
        expect((await scrapeOf(relay, 'tasks')).value('agentrelay_org_quota_rejections_total', { org, quota: 'stored_bytes' })).toBeGreaterThanOrEqual(1),
      60_000,
    );
    expect(await written()).toBe(0);
    expect((await db.query<{ state: string }>(`SELECT "state" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId])).rows[0].state).not.toBe('completed');

    await request(relay.url)
      .patch(`/admin/orgs/${org}`)
      .set(admin)
      .send({ quotas: { stored_bytes: null } })
      .expect(200);
    await eventually(
      async () => expect((await db.query<{ state: string }>(`SELECT "state" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId])).rows[0].state).toBe('completed'),
      60_000,
    );
    expect(await written()).toBeGreaterThanOrEqual(1);
    const bytes = await storedBytesOf(org);
    expect(bytes.counted).toBe(bytes.written);
    expect(bytes.counted).toBeGreaterThan(0);
  }, 180_000);

  it('keeps an org’s upstream deliveries in flight at its quota: the rest wait and are all delivered later, and another org’s are not held behind them', async () => {
    const quota = 2;
    const noisyOrg = uniqueOrg('noisy');
    const quietOrg = uniqueOrg('quiet');
    await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: noisyOrg, quotas: { upstream_in_flight: quota } })
      .expect(201);
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    // The noisy org's upstream answers its first request at once and holds every later answer until released.
    const noisyUpstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', holdLaterAnswers: held });
    const quietUpstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(noisyUpstream, quietUpstream);
    const register = async (handle: string, upstream: UpstreamAgent): Promise<void> => {
      await request(relay.url)
        .post('/admin/agents')
        .set(admin)
        .send({ handle, name: 'Echo', upstream: { card_url: upstream.cardUrl }, webhook_timeout_ms: AGENT_LIMITS.webhookTimeoutMaxMs })
        .expect(201);
    };
    const noisyWorker = `worker@${noisyOrg}`;
    const quietWorker = `worker@${quietOrg}`;
    await register(noisyWorker, noisyUpstream);
    await register(quietWorker, quietUpstream);
    const noisyBoss = await registerAgent(relay, { handle: `boss@${noisyOrg}`, name: 'Noisy boss' });
    const quietBoss = await registerAgent(relay, { handle: `boss@${quietOrg}`, name: 'Quiet boss' });
    const deliveriesTo = async (handle: string): Promise<Array<{ status: string; attempts: number }>> =>
      (
        await db.query<{ status: string; attempts: number }>(
          `SELECT "status", "attempts" FROM "notifier"."deliveries" WHERE "target_handle" = $1 AND "channel" = 'upstream' ORDER BY "created_at"`,
          [handle],
        )
      ).rows;
    const handOff = (boss: RegisteredTestAgent, worker: string, text: string): Promise<string> =>
      createTask(relay.url, boss, { agent: { handle: worker } } as RegisteredTestAgent, text);

    // The upstream answers only its first request at once: this one, so that it holds every answer to the relay.
    await fetch(noisyUpstream.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'none' } }),
    });

    const waiting = 5;
    for (let index = 0; index < waiting; index++) await handOff(noisyBoss, noisyWorker, `held ${index}`);
    // The quota's worth reach the upstream and wait there for their answers.
    await eventually(() => expect(noisyUpstream.received).toHaveLength(quota), 60_000);

    // The quiet org's handoff is delivered meanwhile.
    await handOff(quietBoss, quietWorker, 'not behind them');
    await eventually(async () => expect(await deliveriesTo(quietWorker)).toEqual([{ status: 'succeeded', attempts: 1 }]), 60_000);
    // A little longer, and still no more than the quota of the noisy org's deliveries went out; the others wait, unattempted.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(noisyUpstream.received).toHaveLength(quota);
    const meanwhile = await deliveriesTo(noisyWorker);
    expect(meanwhile.map((delivery) => delivery.status)).toEqual(Array(waiting).fill('pending'));
    expect(meanwhile.filter((delivery) => delivery.attempts === 0)).toHaveLength(waiting - quota);
    const inFlight = await scrapeOf(relay, 'notifier');
    expect(inFlight.value('agentrelay_org_upstream_in_flight', { org: noisyOrg })).toBe(quota);

    release();
    // Every waiting handoff is delivered, once each: none lost, none failed.
    await eventually(async () => expect(await deliveriesTo(noisyWorker)).toEqual(Array(waiting).fill({ status: 'succeeded', attempts: 1 })), 120_000);
    expect(noisyUpstream.received).toHaveLength(waiting);
    expect(new Set(noisyUpstream.received.map((message) => message.messageId)).size).toBe(waiting);
  }, 240_000);
});

describe('the upgrade to stored bytes per org', () => {
  it('counts the bytes already stored to their writers’ orgs: messages by author, artifacts of the create to the sender, later ones to the recipient', async () => {
    const base = new URL(testDatabaseUrl());
    const name = `relay_test_bytes_${randomBytes(4).toString('hex')}`;
    const maintenance = new Client({ connectionString: base.toString() });
    await maintenance.connect();
    await maintenance.query(`CREATE DATABASE "${name}"`);
    const url = new URL(base.toString());
    url.pathname = `/${name}`;
    try {
      const before = new DataSource({
        ...tasksDataSourceOptions(url.toString()),
        migrations: TASKS_MIGRATIONS.slice(0, TASKS_MIGRATIONS.indexOf(OrgStoredBytes1765870000000)),
      });
      await before.initialize();
      await migrateServiceSchema(before);
      const created = new Date('2026-01-01T10:00:00Z');
      const later = new Date('2026-01-01T10:05:00Z');
      const task = async (id: string, sender: string, recipient: string): Promise<void> => {
        await before.query(
          `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name", "summary", "created_at", "updated_at", "status_timestamp")
           VALUES ($1, $2, $3, $3, $3, $4, $4, $4, 'x', $5, $5, $5)`,
          [id, randomUUID(), sender, recipient, created],
        );
      };
      const message = async (taskId: string, sequence: number, author: 'sender' | 'recipient', from: string, bytes: number): Promise<void> => {
        await before.query(
          `INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "size_bytes")
           VALUES ($1, $2, $3, $4, $5, $5, 'x', '[{"kind":"text","text":"x"}]', $6)`,
          [taskId, sequence, randomUUID(), author, from, bytes],
        );
      };
      const artifact = async (taskId: string, position: number, at: Date, bytes: number): Promise<void> => {
        await before.query(
          `INSERT INTO "tasks"."artifacts" ("task_id", "artifact_id", "position", "parts", "size_bytes", "created_at", "updated_at")
           VALUES ($1, $2, $3, '[{"kind":"text","text":"x"}]', $4, $5, $5)`,
          [taskId, randomUUID(), position, bytes, at],
        );
      };
      const [first, second] = ['01JA0000000000000000000001', '01JA0000000000000000000002'];
      await task(first, 'frank@web', 'ana@payments');
      await message(first, 1, 'sender', 'frank@web', 100);
      await message(first, 2, 'recipient', 'ana@payments', 250);
      await artifact(first, 1, created, 40);
      await artifact(first, 2, later, 70);
      await task(second, 'ana@payments', 'olga@ops');
      await message(second, 1, 'sender', 'ana@payments', 30);
      await before.destroy();

      const after = new DataSource(tasksDataSourceOptions(url.toString()));
      await after.initialize();
      expect(await migrateServiceSchema(after)).toEqual(
        TASKS_MIGRATIONS.slice(TASKS_MIGRATIONS.indexOf(OrgStoredBytes1765870000000)).map((migration) => migration.name),
      );
      const orgs: Array<{ org: string; bytes: string }> = await after.query(
        `SELECT "org", sum("bytes")::text AS "bytes" FROM "tasks"."org_stored_bytes" GROUP BY "org" ORDER BY "org"`,
      );
      expect(orgs).toEqual([
        { org: 'ops', bytes: '0' },
        { org: 'payments', bytes: String(250 + 70 + 30) },
        { org: 'web', bytes: String(100 + 40) },
      ]);
      const tallies: Array<{ id: string; sender_stored_bytes: string; recipient_stored_bytes: string }> = await after.query(
        `SELECT "id", "sender_stored_bytes", "recipient_stored_bytes" FROM "tasks"."tasks" ORDER BY "id"`,
      );
      expect(tallies).toEqual([
        { id: first, sender_stored_bytes: '140', recipient_stored_bytes: '320' },
        { id: second, sender_stored_bytes: '30', recipient_stored_bytes: '0' },
      ]);
      await after.destroy();
    } finally {
      await maintenance.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await maintenance.end();
    }
  });
});
