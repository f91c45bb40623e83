import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { dropDatabase, ensureDatabaseExists } from '../libs/database/src/create-database';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ServiceProcess } from './support/process/service-process';
import { TEST_ADMIN_TOKEN, RelayHarness } from './support/relay-harness';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A database of this file's own (named like the run's, so a crashed run's copy is cleaned up). */
function ownDatabaseUrl(): string {
  const url = new URL(process.env.TEST_DATABASE_BASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/relay_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  return url.toString();
}

/**
 * Postgres unreachable for a service (connections refused, open ones terminated), with the
 * directory and tasks services running as real processes on databases of their own: clients get
 * 503 `service_unavailable` naming the service's database, with Retry-After, never a 500; once the
 * database is back, the same processes answer and a retry with the same messageId succeeds once.
 */
describe('a Postgres outage', () => {
  const databases = { directory: ownDatabaseUrl(), tasks: ownDatabaseUrl() };
  let maintenance: pg.Client;
  let relay: RelayHarness;
  const processes: ServiceProcess[] = [];
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  async function allowConnections(service: keyof typeof databases, allowed: boolean): Promise<void> {
    const name = new URL(databases[service]).pathname.slice(1);
    await maintenance.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${allowed ? 'true' : 'false'}`);
    if (!allowed) await maintenance.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
  }

  function send(agent: RegisteredTestAgent, to: RegisteredTestAgent, messageId: string): request.Test {
    return request(relay.url)
      .post(`/a2a/${to.agent.handle}`)
      .set('x-api-key', agent.api_key)
      .set('a2a-version', '1.0')
      .send({
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'during the outage' }] }, configuration: { returnImmediately: true } },
      });
  }

  function list(agent: RegisteredTestAgent): request.Test {
    return request(relay.url)
      .post('/a2a')
      .set('x-api-key', agent.api_key)
      .send({ jsonrpc: '2.0', id: 2, method: 'tasks/list', params: { filter: { role: 'recipient' } } });
  }

  beforeAll(async () => {
    for (const url of Object.values(databases)) await ensureDatabaseExists(url);
    maintenance = new pg.Client({ connectionString: new URL('/postgres', databases.tasks).toString() });
    await maintenance.connect();
    // Each service on a database of its own: one deployment id for all of them.
    relay = await RelayHarness.start({ services: ['notifier'], env: { RELAY_DEPLOYMENT_ID: `outage-${randomUUID()}` } });
    for (const service of ['directory', 'tasks'] as const) processes.push(await ServiceProcess.start(relay, service, { DATABASE_URL: databases[service] }));
    const org = `outage${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    for (const service of ['directory', 'tasks'] as const) await allowConnections(service, true).catch(() => undefined);
    for (const child of processes) await child.kill();
    await relay?.stop();
    await maintenance?.end();
    for (const url of Object.values(databases)) await dropDatabase(url);
  });

  it('of the tasks database: 503 naming it, with Retry-After; the retry with the same messageId creates the task once', async () => {
    expect((await send(alice, bob, randomUUID())).body.result.task.id).toEqual(expect.any(String));

    await allowConnections('tasks', false);
    const messageId = randomUUID();
    try {
      const a2a = await send(alice, bob, messageId);
      expect(a2a.status).toBe(503);
      expect(a2a.headers['retry-after']).toMatch(/^\d+$/);
      expect(a2a.body.error).toMatchObject({ code: -32050, message: expect.stringContaining('database') });
      expect(a2a.body.error.data[0].metadata).toMatchObject({ relay_reason: 'service_unavailable', service: 'tasks', dependency: 'database' });

      const agentRelay = await list(bob);
      expect(agentRelay.status).toBe(503);
      expect(agentRelay.headers['retry-after']).toMatch(/^\d+$/);
      expect(agentRelay.body.error).toMatchObject({ code: -32050, data: { reason: 'service_unavailable', service: 'tasks', dependency: 'database' } });
    } finally {
      await allowConnections('tasks', true);
    }

    const retried = (await eventually(
      async () => {
        const response = await send(alice, bob, messageId);
        return response.status === 200 && response.body.result ? (response.body.result as Json) : false;
      },
      60000,
      250,
    )) as Json;
    const again = await send(alice, bob, messageId);
    expect(again.body.result.task.id).toBe(retried.task.id);
  }, 120000);

  it('of the directory database: authentication and the admin API answer 503 naming it, with Retry-After', async () => {
    await allowConnections('directory', false);
    try {
      // The edge may answer from its directory cache for up to a second; then it asks the directory.
      const call = await eventually(
        async () => {
          const response = await list(bob);
          expect(response.status).toBe(503);
          return response;
        },
        30000,
        100,
      );
      expect(call.headers['retry-after']).toMatch(/^\d+$/);
      expect(call.body.error).toMatchObject({ code: -32050, data: { reason: 'service_unavailable', service: 'directory', dependency: 'database' } });

      const admin = await request(relay.url).get('/admin/agents').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
      expect(admin.status).toBe(503);
      expect(admin.headers['retry-after']).toMatch(/^\d+$/);
      expect(admin.body.error).toMatchObject({ reason: 'service_unavailable', message: expect.stringContaining('database'), data: { service: 'directory' } });
    } finally {
      await allowConnections('directory', true);
    }
    await eventually(async () => (await list(bob)).status === 200, 60000, 250);
  }, 120000);
});
