import { Client as PgClient } from 'pg';
import request from 'supertest';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { AdminAuditEntry, UpstreamStatusView } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { testDatabaseUrl } from './support/test-env';
import { issueTestCertificates, type TestCertificates } from './support/test-certificates';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;

/**
 * Registering a handle that an upstream agent already holds is refused (409 `handle_taken`) before
 * anything of that agent changes: its credential, its mTLS client identity and its accepted card
 * stay, the relay still delivers to it with them, and the refused attempt is in the admin audit.
 */
describe('a refused duplicate registration of an upstream agent', () => {
  let relay: RelayHarness;
  let db: PgClient;
  let certs: TestCertificates;
  let original: UpstreamAgent;
  let other: UpstreamAgent;
  let sender: RegisteredTestAgent;

  beforeAll(async () => {
    certs = issueTestCertificates();
    original = await startUpstreamAgent({
      binding: 'JSONRPC',
      card: '1.0',
      tls: { ...certs.server, ca: certs.ca },
      requireHeader: { name: 'X-API-Key', value: 'original-upstream-key' },
    });
    other = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', requireHeader: { name: 'X-API-Key', value: 'other-upstream-key' } });
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: '500',
        RELAY_UPSTREAM_CARD_REFRESH_MS: '0',
      },
    });
    db = new PgClient({ connectionString: testDatabaseUrl() });
    await db.connect();
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'updup'), name: 'Alice' });
  });

  afterAll(async () => {
    await db?.end();
    await original?.close();
    await other?.close();
    await relay?.stop();
  });

  const admin = () => request(relay.url);

  /** What the notifier keeps of the agent: its credential and client identity as stored (sealed), and its accepted card's URL. */
  const stored = async (handle: string) => ({
    credential: (await db.query(`SELECT "scheme", "header_name", "secret" FROM "notifier"."upstream_credentials" WHERE "handle" = $1`, [handle])).rows,
    tls: (await db.query(`SELECT "client_cert", "client_key", "ca" FROM "notifier"."upstream_tls" WHERE "handle" = $1`, [handle])).rows,
    card: (await db.query(`SELECT "accepted"->>'url' AS "url" FROM "notifier"."upstream_agents" WHERE "handle" = $1`, [handle])).rows,
  });

  it('leaves the credential, the mTLS identity and the card as they were, still delivers with them, and audits the refusal', async () => {
    const handle = uniqueHandle('secure', 'updup');
    const registered = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({
        handle,
        name: 'Secure',
        upstream: {
          card_url: original.cardUrl,
          auth: { scheme: 'api_key', secret: 'original-upstream-key' },
          tls: { ca: certs.ca, client_cert: certs.client.cert, client_key: certs.client.key },
        },
      });
    expect(registered.status).toBe(201);
    const before = await stored(handle);
    expect(before.credential).toHaveLength(1);
    expect(before.tls).toHaveLength(1);
    expect(before.card).toEqual([{ url: original.url }]);

    // The same handle again, with another server's card and credential and no client identity.
    const duplicate = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Impostor', upstream: { card_url: other.cardUrl, auth: { scheme: 'api_key', secret: 'other-upstream-key' } } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.error).toMatchObject({ reason: 'handle_taken' });

    expect(await stored(handle)).toEqual(before);
    const status = (await admin().get(`/admin/agents/${handle}/upstream`).set('authorization', ADMIN).expect(200)).body as UpstreamStatusView;
    expect(status.tls).toMatchObject({ client_cert_subject: 'CN=relay-client' });
    const agent = (await admin().get(`/admin/agents/${handle}`).set('authorization', ADMIN).expect(200)).body;
    expect(agent).toMatchObject({ name: 'Secure', upstream: { url: original.url, auth_scheme: 'api_key' } });

    // The relay still reaches the original server, over mTLS with the original key.
    const client = await senderClient(relay, sender, handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage('still you?'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    await eventually(
      async () => {
        const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        return task;
      },
      30_000,
      100,
    );
    expect(original.tasksCreated).toHaveLength(1);
    expect(other.tasksCreated).toHaveLength(0);

    const audit = (await admin().get('/admin/audit?limit=200').set('authorization', ADMIN).expect(200)).body.items as AdminAuditEntry[];
    expect(audit.filter((entry) => entry.target === handle || (entry.detail as { handle?: string }).handle === handle)).toEqual([
      expect.objectContaining({ action: 'agent.create_refused', actor: 'admin token', target: handle, detail: { reason: 'handle_taken', upstream: true } }),
      expect.objectContaining({ action: 'agent.create', actor: 'admin token' }),
    ]);
  });

  it('a registration of a free handle still stores what it read, once, and the id it was kept under is spent', async () => {
    const handle = uniqueHandle('plain', 'updup');
    const registered = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Plain', upstream: { card_url: other.cardUrl, auth: { scheme: 'api_key', secret: 'other-upstream-key' } } });
    expect(registered.status).toBe(201);
    const kept = await stored(handle);
    expect(kept.credential).toEqual([{ scheme: 'api_key', header_name: 'X-API-Key', secret: expect.stringMatching(/^v1:/) }]);
    expect(kept.tls).toEqual([]);
    expect(kept.card).toEqual([{ url: other.url }]);
    const waiting = await db.query(`SELECT count(*)::int AS "count" FROM "notifier"."upstream_registrations" WHERE "handle" = $1`, [handle]);
    expect(waiting.rows[0].count).toBe(0);
  });
});
