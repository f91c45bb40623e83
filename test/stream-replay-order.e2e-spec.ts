import { Client } from 'pg';
import { ok } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { openSse, type SseEvent } from './support/sse';
import { createTask } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';

/** A resumed stream replays a task's events in position order, also where positions gain a digit. */
describe('Last-Event-ID replay across a digit boundary of event positions', () => {
  let relay: RelayHarness;
  let db: Client;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  const subscribe = (taskId: string, lastEventId?: string) =>
    openSse(
      `${relay.url}/a2a`,
      { authorization: `Bearer ${bob.api_key}`, 'a2a-version': '1.0', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) },
      { jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: taskId } },
    );

  it('replays the events after the id in their order, whatever the number of digits', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'count the digits');
    const opening = await subscribe(taskId);
    const created = (await opening.next()) as SseEvent;
    opening.close();

    const { rows } = await db.query('SELECT COALESCE(max("position"), 0)::text AS "max" FROM "tasks"."outbox_events"');
    let boundary = 10n;
    while (boundary - 2n <= BigInt(rows[0].max as string)) boundary *= 10n;
    await db.query(`SELECT setval('"tasks"."outbox_events_position_seq"', $1::bigint)`, [(boundary - 3n).toString()]);

    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    for (const text of ['first finding', 'second finding'])
      await ok(relay.url, frank.api_key, 'message/send', { task_id: taskId, message: { parts: [{ kind: 'text', text }] } });
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });

    const resumed = await subscribe(taskId, created.id);
    try {
      const events = await resumed.rest();
      // The stream's ids are opaque; the task's events in the outbox are the ones that cross the boundary.
      const { rows: logged } = await db.query<{ position: string }>(
        'SELECT "position"::text AS "position" FROM "tasks"."outbox_events" WHERE "task_id" = $1 ORDER BY "position" OFFSET 1',
        [taskId],
      );
      const positions = logged.map((row) => BigInt(row.position));
      expect(positions.length).toBe(4);
      expect(positions.some((position) => position < boundary) && positions.some((position) => position >= boundary)).toBe(true);
      expect(events.length).toBe(4);
      expect(new Set(events.map((event) => event.id)).size).toBe(4);
      expect(events.map((event) => event.data.result.statusUpdate?.status?.message?.parts?.[0]?.text ?? null)).toEqual([
        null,
        'first finding',
        'second finding',
        null,
      ]);
      expect(events.map((event) => event.data.result.statusUpdate?.status?.state)).toEqual([
        'TASK_STATE_WORKING',
        'TASK_STATE_WORKING',
        'TASK_STATE_WORKING',
        'TASK_STATE_COMPLETED',
      ]);
    } finally {
      resumed.close();
    }
  }, 120000);
});
