import { Client } from 'pg';
import { TASKS_SUBJECTS, type AgentRecord, type ParticipantRef } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { RelayHarness } from './support/relay-harness';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { createTask, textMessage } from './support/tasks';
import { eventually } from './support/eventually';
import { expectRpcError, ok, rpc } from './support/json-rpc';
import { testDatabaseUrl } from './support/test-env';

function ref(agent: AgentRecord): ParticipantRef {
  return { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role };
}

async function inBatches<T>(count: number, size: number, make: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += size) {
    results.push(...(await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, offset) => make(start + offset)))));
  }
  return results;
}

/** Tests that make hundreds of calls: generous, since a loaded machine may serve them slowly. */
const BULK_TEST_TIMEOUT_MS = 300_000;

describe('handoffs at scale: pagination, unread counts, races and limits', () => {
  let relay: RelayHarness;
  let db: Client;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank', role: 'frontend' });
  });

  afterAll(async () => {
    await db.end();
    await relay.stop();
  });

  it(
    'pages through 250 threads while new ones arrive, skipping and repeating none',
    async () => {
      const senders = await Promise.all(['ann', 'ben', 'cid', 'dot', 'eli'].map((name) => registerAgent(relay, { handle: uniqueHandle(name, 'acme'), name })));
      const inbox = await registerAgent(relay, { handle: uniqueHandle('inbox', 'acme'), name: 'Inbox' });
      const created = await inBatches(250, 10, (index) => createTask(relay.url, senders[index % senders.length], inbox, `thread ${index}`));
      const seen: string[] = [];
      const arrivals: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await ok(relay.url, inbox.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 50, cursor } });
        pages++;
        expect(page.items.length).toBeLessThanOrEqual(50);
        seen.push(...page.items.map((item: { task_id: string }) => item.task_id));
        cursor = page.next_cursor;
        arrivals.push(await createTask(relay.url, senders[pages % senders.length], inbox, `arrival ${pages}`));
      } while (cursor !== null);
      expect(pages).toBe(5);
      expect(new Set(seen).size).toBe(seen.length);
      expect([...seen].sort()).toEqual([...created].sort());
      expect(seen.some((id) => arrivals.includes(id))).toBe(false);

      const fresh = await ok(relay.url, inbox.api_key, 'tasks/list', { filter: { role: 'recipient' }, page: { limit: 200 } });
      expect(fresh.items.slice(0, arrivals.length).map((item: { task_id: string }) => item.task_id)).toEqual([...arrivals].reverse());
      expect(fresh.next_cursor).toEqual(expect.any(String));

      const sentByAnn = await ok(relay.url, senders[0].api_key, 'tasks/list', { filter: { role: 'sender' }, page: { limit: 200 } });
      expect(sentByAnn.items).toHaveLength(50 + arrivals.filter((_, index) => (index + 1) % senders.length === 0).length);
      expectRpcError((await rpc(relay.url, inbox.api_key, 'tasks/list', { page: { cursor: 'not-a-cursor' } })).body.error, { code: -32602, field: 'cursor' });
    },
    BULK_TEST_TIMEOUT_MS,
  );

  it('filters the list by status and since', async () => {
    const inbox = await registerAgent(relay, { handle: uniqueHandle('filter', 'acme'), name: 'Filter' });
    const first = await createTask(relay.url, bob, inbox, 'first');
    const second = await createTask(relay.url, bob, inbox, 'second');
    await ok(relay.url, inbox.api_key, 'tasks/update', { task_id: first, transition: 'accept' });
    const pending = await ok(relay.url, inbox.api_key, 'tasks/list', { filter: { status: ['pending'] } });
    expect(pending.items.map((item: { task_id: string }) => item.task_id)).toEqual([second]);
    const both = await ok(relay.url, inbox.api_key, 'tasks/list', { filter: { status: ['pending', 'accepted'] } });
    expect(both.items.map((item: { task_id: string }) => item.task_id)).toEqual([second, first]);
    const secondTask = await ok(relay.url, inbox.api_key, 'tasks/get', { task_id: second });
    const since = await ok(relay.url, inbox.api_key, 'tasks/list', { filter: { since: secondTask.created_at } });
    // Only the first thread was updated (accepted) after the second was created.
    expect(since.items.map((item: { task_id: string }) => item.task_id)).toEqual([first]);
    const future = await ok(relay.url, inbox.api_key, 'tasks/list', { filter: { since: '2999-01-01T00:00:00Z' } });
    expect(future.items).toEqual([]);
  });

  it('counts unread messages of the other party, for both parties', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'unread check');
    const unreadOf = async (agent: RegisteredTestAgent, role: 'recipient' | 'sender') => {
      const page = await ok(relay.url, agent.api_key, 'tasks/list', { filter: { role }, page: { limit: 200 } });
      return page.items.find((item: { task_id: string }) => item.task_id === taskId).unread_messages as number;
    };
    expect(await unreadOf(frank, 'recipient')).toBe(1);
    expect(await unreadOf(bob, 'sender')).toBe(0);
    await ok(relay.url, frank.api_key, 'tasks/get', { task_id: taskId });
    expect(await unreadOf(frank, 'recipient')).toBe(0);
    await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: textMessage('question one') });
    await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: textMessage('question two') });
    expect(await unreadOf(bob, 'sender')).toBe(2);
    expect(await unreadOf(frank, 'recipient')).toBe(0);
    await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
    expect(await unreadOf(bob, 'sender')).toBe(0);
    await ok(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: textMessage('answer') });
    expect(await unreadOf(frank, 'recipient')).toBe(1);
    expect(await unreadOf(bob, 'sender')).toBe(0);
  });

  it('lets exactly one of 20 concurrent accepts win; the audit log holds one accept', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'race');
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        rpc(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept', session_id: `s-${index}` }, { id: index }),
      ),
    );
    const winners = responses.filter((response) => response.body.result);
    expect(winners).toHaveLength(1);
    for (const loser of responses.filter((response) => response.body.error)) {
      expect([-32010, -32008]).toContain(loser.body.error!.code);
    }
    const audit = await db.query(
      `SELECT "transition", "actor_id", "from_state", "to_state", "session_id" FROM "tasks"."audit_log" WHERE "task_id" = $1 ORDER BY "id"`,
      [taskId],
    );
    expect(audit.rows).toEqual([
      { transition: 'create', actor_id: bob.agent.id, from_state: null, to_state: 'pending', session_id: null },
      { transition: 'accept', actor_id: frank.agent.id, from_state: 'pending', to_state: 'accepted', session_id: `s-${winners[0].body.id}` },
    ]);
  });

  it('answers -32010 when another transition commits between the read and the conditional update', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'lost race');
    const rival = new Client({ connectionString: testDatabaseUrl() });
    await rival.connect();
    try {
      await rival.query('BEGIN');
      await rival.query(`SELECT 1 FROM "tasks"."tasks" WHERE "id" = $1 FOR UPDATE`, [taskId]);
      const accept = rpc(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
      // The accept has read "pending" and now waits for the row lock in its conditional UPDATE.
      await eventually(async () => {
        const waiting = await db.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE "tasks"."tasks"%' AND datname = current_database()`,
        );
        expect(waiting.rows[0].n).toBeGreaterThan(0);
      });
      await rival.query(`UPDATE "tasks"."tasks" SET "state" = 'rejected', "rejected_at" = now(), "status_timestamp" = now() WHERE "id" = $1`, [taskId]);
      await rival.query('COMMIT');
      const response = await accept;
      expect(response.body.error).toMatchObject({ code: -32010, data: { reason: 'state_changed', expected_state: 'pending', state: 'rejected' } });
    } finally {
      await rival.end();
    }
  });

  it('writes one outbox event per change in the same transaction', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'events');
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: textMessage('working on it') });
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'shipped' });
    const events = await db.query(`SELECT "id", "subject", "type", "payload" FROM "tasks"."outbox_events" WHERE "task_id" = $1 ORDER BY "position"`, [taskId]);
    expect(events.rows.map((row) => row.type)).toEqual(['created', 'accepted', 'message_appended', 'completed']);
    for (const row of events.rows) {
      expect(row.subject).toBe(`relay.events.task.${row.type}`);
      expect(row.payload).toMatchObject({
        schema_version: 1,
        event_id: row.id,
        type: row.type,
        task_id: taskId,
        sender: bob.agent.handle,
        recipient: frank.agent.handle,
      });
    }
    expect(events.rows[3].payload).toMatchObject({ state: 'completed', task: { result_summary: 'shipped', message_count: 2 } });
  });

  it(
    'holds at most 500 messages per thread, with sequence numbers without gaps',
    async () => {
      const taskId = await createTask(relay.url, bob, frank, 'long thread');
      const client = relay.edge.get(NatsRpcClient);
      for (let index = 2; index <= 500; index++) {
        await client.request(TASKS_SUBJECTS.send, {
          caller: ref(index % 2 ? bob.agent : frank.agent),
          task_id: taskId,
          message: { parts: [{ kind: 'text', text: `m${index}` }] },
          history_length: 0,
        });
      }
      const full = await rpc(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: textMessage('one too many') });
      expect(full.body.error).toMatchObject({ code: -32014, data: { reason: 'thread_message_limit' } });
      const sequence = await db.query(`SELECT array_agg("sequence_no" ORDER BY "sequence_no") AS seq FROM "tasks"."messages" WHERE "task_id" = $1`, [taskId]);
      expect(sequence.rows[0].seq).toEqual(Array.from({ length: 500 }, (_, index) => index + 1));
    },
    BULK_TEST_TIMEOUT_MS,
  );

  it(
    'reads a thread larger than one reply page by page, in full, in order',
    async () => {
      const taskId = await createTask(relay.url, bob, frank, 'big thread');
      const big = (index: number) => `${index}:`.padEnd(90_000, String.fromCharCode(97 + index));
      for (let index = 0; index < 12; index++) {
        await ok(relay.url, index % 2 ? bob.api_key : frank.api_key, 'message/send', { task_id: taskId, message: textMessage(big(index)) });
      }
      const messages: Array<{ sequence_no: number; body: string }> = [];
      let pages = 0;
      for (let after: number | null = 0; after !== null; pages++) {
        const page = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId, after_sequence_no: after });
        expect(page.message_count).toBe(13);
        messages.push(...page.messages);
        after = page.has_more_messages ? page.next_after_sequence_no : null;
      }
      expect(pages).toBeGreaterThan(1);
      expect(messages.map((message) => message.sequence_no)).toEqual(Array.from({ length: 13 }, (_, index) => index + 1));
      expect(messages[12].body).toBe(big(11));
    },
    BULK_TEST_TIMEOUT_MS,
  );

  it(
    'cuts list pages that would not fit one reply, and goes on with the cursor',
    async () => {
      const inbox = await registerAgent(relay, { handle: uniqueHandle('bulky', 'acme'), name: 'Bulky' });
      const long = (index: number) => `${index}:`.padEnd(90_000, 'z');
      const created = [];
      for (let index = 0; index < 12; index++) created.push(await createTask(relay.url, bob, inbox, long(index)));
      const client = relay.edge.get(NatsRpcClient);
      const first = await client.request(TASKS_SUBJECTS.list, { caller_id: inbox.agent.id, limit: 50 });
      expect(first.items.length).toBeGreaterThan(0);
      expect(first.items.length).toBeLessThan(12);
      expect(first.next_cursor).toEqual(expect.any(String));
      const rest = await client.request(TASKS_SUBJECTS.list, { caller_id: inbox.agent.id, limit: 50, cursor: first.next_cursor! });
      expect([...first.items, ...rest.items].map((item) => item.id)).toEqual([...created].reverse());
      expect(rest.next_cursor).toBeNull();
      const preview = await ok(relay.url, inbox.api_key, 'tasks/list', {});
      expect(preview.items).toHaveLength(12);
      expect(preview.items[0].summary_preview).toHaveLength(200);
      expect(preview.items[0].summary_preview.endsWith('…')).toBe(true);
    },
    BULK_TEST_TIMEOUT_MS,
  );

  it('keeps the invariants in the database too', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'invariants');
    await expect(db.query(`UPDATE "tasks"."tasks" SET "state" = 'bogus' WHERE "id" = $1`, [taskId])).rejects.toThrow(/tasks_state_known/);
    await expect(db.query(`UPDATE "tasks"."tasks" SET "state" = 'completed' WHERE "id" = $1`, [taskId])).rejects.toThrow(
      /tasks_(completed_at_when_completed|accepted_at_when_accepted)/,
    );
    await expect(db.query(`UPDATE "tasks"."tasks" SET "intent" = 'propose_action' WHERE "id" = $1`, [taskId])).rejects.toThrow(
      /tasks_proposed_action_matches_intent/,
    );
    await expect(
      db.query(
        `INSERT INTO "tasks"."messages" ("task_id", "sequence_no", "id", "author", "author_id", "from_handle", "body", "parts") VALUES ($1, 1, 'dup', 'sender', 'x', 'x', 'x', '[{"kind":"text","text":"x"}]')`,
        [taskId],
      ),
    ).rejects.toThrow(/messages_pkey/);
    await expect(
      db.query(
        `INSERT INTO "tasks"."audit_log" ("task_id", "actor_id", "transition", "from_state", "to_state") VALUES ($1, 'x', 'accept', NULL, 'accepted')`,
        [taskId],
      ),
    ).rejects.toThrow(/audit_log_create_has_no_from/);
  });

  it(
    'holds at most 100 tasks per context',
    async () => {
      const client = relay.edge.get(NatsRpcClient);
      const first = await client.request(TASKS_SUBJECTS.send, {
        caller: ref(bob.agent),
        recipient: ref(frank.agent),
        message: { parts: [{ kind: 'text', text: 'ctx 1' }] },
        history_length: 0,
      });
      const contextId = first.task.context_id;
      for (let index = 2; index <= 100; index++) {
        await client.request(TASKS_SUBJECTS.send, {
          caller: ref(bob.agent),
          recipient: ref(frank.agent),
          context_id: contextId,
          message: { parts: [{ kind: 'text', text: `ctx ${index}` }] },
          history_length: 0,
        });
      }
      await expect(
        client.request(TASKS_SUBJECTS.send, {
          caller: ref(bob.agent),
          recipient: ref(frank.agent),
          context_id: contextId,
          message: { parts: [{ kind: 'text', text: 'ctx 101' }] },
        }),
      ).rejects.toMatchObject({ reason: 'context_limit_reached' });
    },
    BULK_TEST_TIMEOUT_MS,
  );
});
