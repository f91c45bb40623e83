import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { EventCollector } from './support/event-collector';
import { eventually } from './support/eventually';
import { SecretCipher, sealJsonValues } from '@app/secrets';
import { resealAllSecrets } from '../scripts/reseal-all';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { RelayHarness, TEST_SECRET_KEYS } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// The old key is the one every other test's relay uses (they share the database), so re-sealing the
// whole database moves their rows too; afterAll seals everything with it again.
const KEY_A = TEST_SECRET_KEYS;
const KEY_B = `b2026:${randomBytes(32).toString('base64')}`;

/** Rows of the relay's schemas whose text (every column, JSON included) contains the needle. */
async function rowsContaining(db: pg.Client, needle: string): Promise<string[]> {
  const { rows: tables } = await db.query<{ schema: string; table: string }>(
    `SELECT table_schema AS "schema", table_name AS "table" FROM information_schema.tables
      WHERE table_schema IN ('tasks', 'notifier', 'directory') AND table_type = 'BASE TABLE'`,
  );
  const found: string[] = [];
  for (const { schema, table } of tables) {
    const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}"."${table}" t WHERE strpos(t::text, $1) > 0`, [needle]);
    if (rows[0].n > 0) found.push(`${schema}.${table} (${rows[0].n})`);
  }
  return found;
}

describe('secrets at rest: push credentials and webhook secrets are sealed, kept out of events, and keys rotate', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let db: pg.Client;
  let events: EventCollector;
  let sender: RegisteredTestAgent;
  let recipient: RegisteredTestAgent;
  let sequence = 0;
  const credentials = `cred-${randomUUID()}`;
  const token = `tok-${randomUUID()}`;

  async function call(agent: RegisteredTestAgent, path: string, method: string, params: unknown, version: string | null = '1.0'): Promise<Json> {
    const http = request(relay.url).post(path).set('authorization', `Bearer ${agent.api_key}`);
    if (version !== null) http.set('a2a-version', version);
    const response = await http.send({ jsonrpc: '2.0', id: ++sequence, method, params }).expect(200);
    if (response.body.error) throw new Error(`${method} answered ${JSON.stringify(response.body.error)}`);
    return response.body.result as Json;
  }

  function webhooksTo(agent: RegisteredTestAgent): SinkRequest[] {
    return sink.to(`/hook/${agent.agent.handle}`);
  }

  /** Sends a message in the thread and waits for its webhook (signed) and its push (authenticated). */
  async function expectDeliveriesStillWork(taskId: string, text: string, secret: string): Promise<void> {
    const webhooksBefore = webhooksTo(recipient).length;
    const pushesBefore = sink.to('/push').length;
    await call(sender, `/a2a/${recipient.agent.handle}`, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', taskId, parts: [{ text }] },
      configuration: { returnImmediately: true },
    });
    const webhook = await eventually(() => {
      const arrived = webhooksTo(recipient).slice(webhooksBefore);
      expect(arrived.map((hook) => JSON.parse(hook.body).type)).toContain('a2a.task.message');
      return arrived.find((hook) => JSON.parse(hook.body).type === 'a2a.task.message') as SinkRequest;
    }, 30000);
    expect(verifyStandardWebhook(webhook, secret)).toBe(true);
    const push = await eventually(() => {
      const arrived = sink.to('/push').slice(pushesBefore);
      expect(arrived.map((one) => JSON.parse(one.body).message?.parts?.[0]?.text)).toContain(text);
      return arrived.find((one) => JSON.parse(one.body).message?.parts?.[0]?.text === text) as SinkRequest;
    }, 30000);
    expect(push.headers.authorization).toBe(`Bearer ${credentials}`);
    expect(push.headers['x-a2a-notification-token']).toBeUndefined();
  }

  async function sealedValues(): Promise<string[]> {
    const { rows } = await db.query<{ value: string }>(
      `SELECT "token" AS "value" FROM "tasks"."push_configs" WHERE "token" IS NOT NULL AND "owner_handle" = $1
       UNION ALL SELECT "auth_credentials" FROM "tasks"."push_configs" WHERE "auth_credentials" IS NOT NULL AND "owner_handle" = $1
       UNION ALL SELECT "token" FROM "notifier"."push_targets" WHERE "token" IS NOT NULL AND "owner_handle" = $1
       UNION ALL SELECT "auth_credentials" FROM "notifier"."push_targets" WHERE "auth_credentials" IS NOT NULL AND "owner_handle" = $1
       UNION ALL SELECT "secret" FROM "notifier"."webhook_secrets" WHERE "handle" IN ($1, $2)
       UNION ALL SELECT h.value FROM "notifier"."deliveries" d, jsonb_each_text(d."headers") h WHERE d."channel" = 'push' AND d."target_handle" = $1`,
      [sender.agent.handle, recipient.agent.handle],
    );
    return rows.map((row) => row.value);
  }

  async function restartStoringServices(secretKeys: string): Promise<void> {
    await relay.stopService('tasks');
    await relay.stopService('notifier');
    await relay.startService('tasks', { RELAY_SECRET_KEYS: secretKeys });
    await relay.startService('notifier', { RELAY_SECRET_KEYS: secretKeys });
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_SECRET_KEYS: KEY_A, RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms' } });
    events = await EventCollector.start(relay.subjectPrefix, 'relay.events.>');
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    sender = await registerAgent(relay, { handle: uniqueHandle('sealer', 'acme'), name: 'Sealer' });
    const handle = uniqueHandle('opener', 'acme');
    recipient = await registerAgent(relay, { handle, name: 'Opener', notification_webhook_url: sink.url(`/hook/${handle}`) });
  });

  afterAll(async () => {
    await events?.stop();
    await db?.end();
    await relay?.stop();
    await sink?.stop();
    await resealAllSecrets(testDatabaseUrl(), `${KEY_A},${KEY_B}`);
  });

  it('stores no clear secret, publishes no credentials, still signs webhooks and authenticates pushes, and survives a key rotation', async () => {
    const secret = recipient.webhook_secret as string;
    expect(secret).toMatch(/^whsec_/);
    const sent = await call(sender, `/a2a/${recipient.agent.handle}`, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'Seal these' }] },
      configuration: { returnImmediately: true },
    });
    const taskId = sent.task.id as string;
    await call(sender, '/a2a', 'CreateTaskPushNotificationConfig', {
      taskId,
      id: 'sealed',
      url: sink.url('/push'),
      authentication: { scheme: 'Bearer', credentials },
    });
    await call(
      sender,
      '/a2a',
      'tasks/pushNotificationConfig/set',
      { taskId, pushNotificationConfig: { id: 'sealed-03', url: sink.url('/push-03'), token } },
      null,
    );

    await expectDeliveriesStillWork(taskId, 'first message', secret);
    await eventually(() => expect(sink.to('/push-03').map((one) => one.headers['x-a2a-notification-token'])).toContain(token), 30000);

    // The database: every table of the three schemas, every column, holds none of the secrets in clear.
    for (const needle of [credentials, token, secret]) expect({ needle, rows: await rowsContaining(db, needle) }).toEqual({ needle, rows: [] });
    const sealed = await sealedValues();
    expect(sealed.length).toBeGreaterThanOrEqual(6);
    for (const value of sealed) expect(value).toMatch(/^v1:test:/);

    // The event stream: the push-config events name the config, without its token or credentials.
    const pushConfigEvents = await eventually(() => {
      const found = events.events.filter((collected) => collected.subject.endsWith('relay.events.push_config.set') && collected.event.task_id === taskId);
      expect(found).toHaveLength(2);
      return found;
    }, 30000);
    for (const collected of pushConfigEvents) {
      expect(Object.keys(collected.event).sort()).toEqual(['config_id', 'deleted', 'event_id', 'occurred_at', 'owner', 'task_id', 'url', 'version']);
    }
    const streamText = JSON.stringify(events.events);
    expect(streamText).not.toContain(credentials);
    expect(streamText).not.toContain(token);
    expect(streamText).not.toContain(secret);

    // A row stored before sealing (in clear) is still read, and sealed at the next start.
    const { rowCount } = await db.query(`UPDATE "notifier"."webhook_secrets" SET "secret" = $1 WHERE "handle" = $2`, [secret, recipient.agent.handle]);
    expect(rowCount).toBe(1);
    await db.query(`UPDATE "tasks"."push_configs" SET "auth_credentials" = $1 WHERE "task_id" = $2 AND "id" = 'sealed'`, [credentials, taskId]);
    await expectDeliveriesStillWork(taskId, 'read from a clear row', secret);
    const shown = await call(sender, '/a2a', 'GetTaskPushNotificationConfig', { taskId, id: 'sealed' });
    expect(shown.authentication).toEqual({ scheme: 'Bearer', credentials: `****${credentials.slice(-4)}` });

    // Rotation, step 1: the new key is listed after the current one, so every replica can open what
    // it will seal; a start also seals the rows still in clear with the current key.
    await restartStoringServices(`${KEY_A},${KEY_B}`);
    await eventually(async () => expect((await sealedValues()).filter((value) => !value.startsWith('v1:test:'))).toEqual([]), 30000);
    await expectDeliveriesStillWork(taskId, 'after listing the new key', secret);

    // Step 2: the new key first, and the re-sealing command moves every stored secret to it.
    const results = await resealAllSecrets(testDatabaseUrl(), `${KEY_B},${KEY_A}`);
    expect(results.reduce((sum, result) => sum + result.unreadable, 0)).toBe(0);
    expect(results.reduce((sum, result) => sum + result.resealed, 0)).toBeGreaterThanOrEqual(6);
    expect((await sealedValues()).filter((value) => !value.startsWith('v1:b2026:'))).toEqual([]);
    await restartStoringServices(`${KEY_B},${KEY_A}`);
    await expectDeliveriesStillWork(taskId, 'after re-sealing with the new key', secret);

    // Step 3: the old key retired; nothing needs it any more.
    await restartStoringServices(KEY_B);
    await expectDeliveriesStillWork(taskId, 'after retiring the old key', secret);
    for (const value of await sealedValues()) expect(value).toMatch(/^v1:b2026:/);
    for (const needle of [credentials, token, secret]) expect({ needle, rows: await rowsContaining(db, needle) }).toEqual({ needle, rows: [] });
  }, 180000);

  it('dead-letters a delivery whose headers were sealed with a key no longer listed, and sends nothing', async () => {
    const gone = SecretCipher.fromConfig(`gone:${randomBytes(32).toString('base64')}`);
    const id = randomUUID();
    await db.query(
      `INSERT INTO "notifier"."deliveries" ("id", "event_id", "task_id", "event", "channel", "target_handle", "target_ref", "url", "destination", "content_type", "headers", "body", "status", "next_attempt_at")
       VALUES ($1, $2, 'T-UNREADABLE', 'a2a.task.message', 'push', $3, 'push:gone', $4, $6, 'application/json', $5, '{}', 'pending', now())`,
      [
        id,
        randomUUID(),
        sender.agent.handle,
        sink.url('/never'),
        JSON.stringify(sealJsonValues(gone, { authorization: 'Bearer lost' })),
        new URL(sink.url('/never')).host,
      ],
    );
    const row = await eventually(async () => {
      const { rows } = await db.query<{ status: string; last_error: string | null; attempts: number }>(
        `SELECT "status", "last_error", "attempts" FROM "notifier"."deliveries" WHERE "id" = $1`,
        [id],
      );
      expect(rows[0].status).toBe('dead');
      return rows[0];
    }, 30000);
    expect(row.last_error).toMatch(/key "gone"/);
    expect(row.attempts).toBe(0);
    expect(sink.to('/never')).toEqual([]);
  });

  it('refuses to start a storing service without a valid RELAY_SECRET_KEYS, naming the key but not quoting it', async () => {
    const shortKey = randomBytes(16).toString('base64');
    for (const service of ['tasks', 'notifier'] as const) {
      const refused = await relay.startService(service, { RELAY_SECRET_KEYS: `k:${shortKey}` }).then(
        () => null,
        (error: Error) => error.message,
      );
      expect(refused).toMatch(/RELAY_SECRET_KEYS key "k" must be 32 bytes/);
      expect(refused).not.toContain(shortKey);
      await expect(relay.startService(service, { RELAY_SECRET_KEYS: '' })).rejects.toThrow(/RELAY_SECRET_KEYS is required/);
    }
  });
});
