import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Client } from 'pg';
import { RelayHarness } from './support/relay-harness';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { createTask, textMessage } from './support/tasks';
import { eventually } from './support/eventually';
import { expectRpcError, ok, rpc, type RpcResponse } from './support/json-rpc';
import { ServiceProcess } from './support/process/service-process';
import { testDatabaseUrl } from './support/test-env';

/**
 * Overload of the tasks service, with the service as a real process: work in flight is bounded
 * (the excess is refused at once with 503 and Retry-After; readiness fails while the service sheds
 * everything), and a request whose caller timed out
 * while the process was stalled (SIGSTOP) is not carried out when it runs on (SIGCONT).
 */
describe("tasks service overload: bounded work in flight, no work past the caller's deadline", () => {
  const MAX_IN_FLIGHT = 2;
  let relay: RelayHarness;
  let tasks: ServiceProcess;
  let db: Client;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    // Requests held on a row lock must outlast neither the edge's nor the database's timeout.
    relay = await RelayHarness.start({
      services: ['directory', 'notifier'],
      env: { NATS_REQUEST_TIMEOUT_MS: '60000', RELAY_DB_STATEMENT_TIMEOUT_MS: '60000' },
    });
    tasks = await ServiceProcess.start(relay, 'tasks', { RELAY_MAX_IN_FLIGHT: String(MAX_IN_FLIGHT) });
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
  }, 90000);

  afterAll(async () => {
    tasks?.resume();
    await tasks?.kill();
    await db?.query('ROLLBACK').catch(() => undefined);
    await db?.end();
    await relay?.stop();
  });

  it('refuses requests past RELAY_MAX_IN_FLIGHT at once with 503 overloaded and Retry-After, and finishes the ones in flight', async () => {
    const held = [await createTask(relay.url, bob, frank, 'held 1'), await createTask(relay.url, bob, frank, 'held 2')];
    await ok(relay.url, frank.api_key, 'tasks/get', { task_id: held[0] });
    await db.query('BEGIN');
    await db.query(`SELECT 1 FROM "tasks"."tasks" WHERE "id" = ANY($1::text[]) FOR UPDATE`, [held]);
    let inFlight: Array<Promise<RpcResponse>>;
    try {
      const answered: unknown[] = [];
      inFlight = held.map((taskId) =>
        rpc(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' }).then((response) => {
          answered.push({ status: response.status, body: response.body });
          return response;
        }),
      );
      await eventually(async () => {
        // An accept answered while its row is locked was not held: say what it answered.
        expect(answered).toEqual([]);
        // Each accept waits on the row lock, in whichever statement of its transition reaches the row first.
        const { rows } = await db.query<{ pid: number; statement: string }>(
          `SELECT DISTINCT l."pid", left(a."query", 120) AS "statement" FROM pg_locks l JOIN pg_stat_activity a ON a."pid" = l."pid"
           WHERE NOT l."granted" AND a."datname" = current_database() AND a."application_name" = 'agentrelay-tasks'`,
        );
        expect({ waiting: rows.length, statements: rows.map((row) => row.statement) }).toMatchObject({ waiting: MAX_IN_FLIGHT });
      }, 60000);

      const shed = await Promise.all(Array.from({ length: 4 }, () => rpc(relay.url, bob.api_key, 'tasks/list', { filter: { role: 'sender' } })));
      for (const response of shed) {
        expect(response.status).toBe(503);
        expectRpcError(response.body.error, { code: -32052, reason: 'overloaded' });
        expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      }

      // Shedding everything for a while, the service is not ready, though it still answers its health check.
      await eventually(async () => {
        const readiness = await fetch(`${relay.url}/readyz`);
        const report = (await readiness.json()) as { down: string[]; services: { tasks: { error?: string } } };
        expect({ status: readiness.status, down: report.down, tasks: report.services.tasks.error }).toEqual({
          status: 503,
          down: ['tasks'],
          tasks: 'overloaded',
        });
      }, 60000);
    } finally {
      await db.query('ROLLBACK');
    }
    for (const response of await Promise.all(inFlight)) {
      expect({ status: response.status, error: response.body.error }).toEqual({ status: 200, error: undefined });
      expect(response.body.result?.status.state).toBe('accepted');
    }
    const after = await ok(relay.url, bob.api_key, 'tasks/list', { filter: { role: 'sender' } });
    expect(after.items.length).toBeGreaterThanOrEqual(2);
    await eventually(async () => expect((await fetch(`${relay.url}/readyz`)).status).toBe(200), 60000);
  }, 120000);

  it('does not carry out creates whose caller timed out while the service was stalled, and their key is free for the retry', async () => {
    const impatient: NestFastifyApplication = await relay.startEdge({ NATS_REQUEST_TIMEOUT_MS: '2000' });
    const keys = Array.from({ length: 6 }, (_, index) => `stalled-${index}-${Math.random().toString(36).slice(2, 8)}`);
    tasks.pause();
    let timedOut: RpcResponse[];
    try {
      timedOut = await Promise.all(
        keys.map((key) =>
          rpc(relay.urlOf(impatient), bob.api_key, 'message/send', {
            recipient: frank.agent.handle,
            message: textMessage(`sent while stalled (${key})`),
            metadata: { client_idempotency_key: key },
          }),
        ),
      );
    } finally {
      tasks.resume();
    }
    for (const response of timedOut) {
      expect(response.status).toBe(504);
      expectRpcError(response.body.error, { code: -32051, reason: 'service_timeout' });
    }

    // A create sent after the stall is handled after the stalled ones (one subscription, in order).
    const fresh = await eventually(
      () => ok(relay.url, frank.api_key, 'message/send', { recipient: bob.agent.handle, message: textMessage('after the stall') }),
      60000,
    );
    expect(fresh.status.state).toBe('pending');
    await ok(relay.url, frank.api_key, 'tasks/list', { filter: { role: 'sender' } });
    const { rows } = await db.query(`SELECT count(*)::int AS "committed" FROM "tasks"."idempotency_keys" WHERE "key" = ANY($1::text[])`, [keys]);
    expect(rows[0].committed).toBe(0);

    const retried = await ok(relay.url, bob.api_key, 'message/send', {
      recipient: frank.agent.handle,
      message: textMessage(`sent while stalled (${keys[0]})`),
      metadata: { client_idempotency_key: keys[0] },
    });
    expect(retried.status.state).toBe('pending');
    const again = await ok(relay.url, bob.api_key, 'message/send', {
      recipient: frank.agent.handle,
      message: textMessage(`sent while stalled (${keys[0]})`),
      metadata: { client_idempotency_key: keys[0] },
    });
    expect(again.task_id).toBe(retried.task_id);
  }, 120000);
});
