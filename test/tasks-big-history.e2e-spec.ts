import { Client } from 'pg';
import request from 'supertest';
import { TASK_LIMITS } from '@app/contracts';
import { RelayHarness } from './support/relay-harness';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { createTask } from './support/tasks';
import { expectRpcError, ok, rpc, type Json } from './support/json-rpc';
import { openSse } from './support/sse';
import { testDatabaseUrl } from './support/test-env';

/** 61 messages of about 0.8 MB (eight text parts of 100,000 characters), as one agent can pile them up. */
const BIG_MESSAGES = 61;
const PARTS_PER_MESSAGE = 8;

/** Fills a thread with big messages (and their sizes) straight in its table: the reads, not the writes, are under test. */
async function fillWithBigMessages(db: Client, taskId: string, author: RegisteredTestAgent): Promise<void> {
  await db.query(
    `INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts", "payload", "created_at", "size_bytes")
     SELECT $1, g, 'big-' || g, 'sender', $2, $3, c."body", c."parts", '{}', now(), octet_length(c."body") + octet_length(c."parts"::text) + 2
     FROM generate_series(2, $6) AS g,
       LATERAL (SELECT repeat(chr(97 + g % 26), $4) AS "body",
                       (SELECT jsonb_agg(jsonb_build_object('kind', 'text', 'text', repeat(chr(97 + (g + p * 0) % 26), $4))) FROM generate_series(1, $5) AS p) AS "parts") c`,
    [taskId, author.agent.id, author.agent.handle, TASK_LIMITS.textPartChars, PARTS_PER_MESSAGE, BIG_MESSAGES],
  );
  await db.query(`UPDATE "tasks"."tasks" SET "message_count" = $2 WHERE "id" = $1`, [taskId, BIG_MESSAGES]);
}

describe('a thread of big messages: read budget in Postgres, paged AgentRelay tasks/get', () => {
  let relay: RelayHarness;
  let db: Client;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let taskId: string;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank', role: 'frontend' });
    taskId = await createTask(relay.url, bob, frank, 'Here come the logs.');
    await fillWithBigMessages(db, taskId, bob);
  }, 120000);

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('answers 8 concurrent AgentRelay tasks/get with a first page each, and the pages hold every message once', async () => {
    const reads = await Promise.all(Array.from({ length: 8 }, () => rpc(relay.url, frank.api_key, 'tasks/get', { task_id: taskId })));
    for (const read of reads) {
      expect({ status: read.status, error: read.body.error }).toEqual({ status: 200, error: undefined });
      const page = read.body.result as Json;
      expect(page.message_count).toBe(BIG_MESSAGES);
      expect(page.messages.length).toBeGreaterThanOrEqual(1);
      expect(page.messages.length).toBeLessThan(BIG_MESSAGES);
      expect(page.messages[0].sequence_no).toBe(1);
      expect(page.has_more_messages).toBe(true);
      expect(page.next_after_sequence_no).toBe(page.messages[page.messages.length - 1].sequence_no);
    }

    const seen: number[] = [];
    let after: number | null = 0;
    while (after !== null) {
      const page = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId, after_sequence_no: after });
      expect(Buffer.byteLength(JSON.stringify(page.messages))).toBeLessThan(TASK_LIMITS.replyMessageBytes + 1_000_000);
      seen.push(...page.messages.map((message: Json) => message.sequence_no as number));
      after = page.next_after_sequence_no as number | null;
      if (after === null) expect(page.has_more_messages).toBe(false);
    }
    expect(seen).toEqual(Array.from({ length: BIG_MESSAGES }, (_, index) => index + 1));
  }, 180000);

  it('answers 8 concurrent A2A GetTask with the newest messages that fit, and other agents are served meanwhile', async () => {
    const ann = await registerAgent(relay, { handle: uniqueHandle('ann', 'acme'), name: 'Ann' });
    const [reads, other] = await Promise.all([
      Promise.all(
        Array.from({ length: 8 }, () =>
          request(relay.url)
            .post('/a2a')
            .set('authorization', `Bearer ${frank.api_key}`)
            .set('a2a-version', '1.0')
            .send({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: taskId } }),
        ),
      ),
      createTask(relay.url, ann, frank, 'Unrelated work, served while the big thread is read.'),
    ]);
    expect(other).toEqual(expect.any(String));
    for (const read of reads) {
      expect({ status: read.status, error: read.body.error }).toEqual({ status: 200, error: undefined });
      const history = (read.body.result as Json).history as Json[];
      expect(history.length).toBeGreaterThanOrEqual(1);
      expect(history.length).toBeLessThan(BIG_MESSAGES);
      expect(history[history.length - 1].messageId).toBe(`big-${BIG_MESSAGES}`);
    }
    const ready = await request(relay.url).get('/readyz');
    expect(ready.status).toBe(200);
  }, 180000);

  it('opens a SubscribeToTask stream with the newest messages that fit, flagged as a cut history', async () => {
    const stream = await openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${frank.api_key}`, 'a2a-version': '1.0' },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SubscribeToTask',
        params: { id: taskId },
      },
    );
    try {
      expect(stream.status).toBe(200);
      const first = await stream.next();
      const task = first?.data.result.task as Json;
      expect(task.history.length).toBeGreaterThanOrEqual(1);
      expect(task.history.length).toBeLessThan(BIG_MESSAGES);
      expect(task.history[task.history.length - 1].messageId).toBe(`big-${BIG_MESSAGES}`);
      expect(task.metadata.relay.historyTruncated).toBe(true);
    } finally {
      stream.close();
    }
  }, 180000);

  it('refuses an after_sequence_no that is not a non-negative integer', async () => {
    const response = await rpc(relay.url, frank.api_key, 'tasks/get', { task_id: taskId, after_sequence_no: -1 });
    expectRpcError(response.body.error, { code: -32602, field: 'after_sequence_no' });
  });
});

describe("the statement timeout of the services' database pools", () => {
  let relay: RelayHarness;
  let db: Client;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_DB_STATEMENT_TIMEOUT_MS: '1000', NATS_REQUEST_TIMEOUT_MS: '60000' } });
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    await db?.query('ROLLBACK').catch(() => undefined);
    await db?.end();
    await relay?.stop();
  });

  it('cancels a statement stuck behind a lock and answers 503 with Retry-After, nothing changed', async () => {
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    const frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
    const taskId = await createTask(relay.url, bob, frank);
    await db.query('BEGIN');
    await db.query(`SELECT 1 FROM "tasks"."tasks" WHERE "id" = $1 FOR UPDATE`, [taskId]);
    let stuck;
    try {
      stuck = await rpc(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    } finally {
      await db.query('ROLLBACK');
    }
    expect(stuck.status).toBe(503);
    expectRpcError(stuck.body.error, { code: -32050, reason: 'service_unavailable' });
    expect((stuck.body.error?.data as Json).dependency).toBe('database');
    expect(Number(stuck.headers['retry-after'])).toBeGreaterThan(0);

    const task = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
    expect(task.status.state).toBe('pending');
    const accepted = await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    expect(accepted.status.state).toBe('accepted');
  }, 120000);
});
