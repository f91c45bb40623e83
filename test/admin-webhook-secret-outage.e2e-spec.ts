import pg from 'pg';
import request from 'supertest';
import { SecretCipher } from '@app/secrets';
import { registerAgent, uniqueHandle } from './support/agents';
import { eventually } from './support/eventually';
import { createHandoff } from './support/handoffs';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness, TEST_ADMIN_TOKEN, TEST_SECRET_KEYS } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]{32,}$/;

/**
 * Issue 10 item 3: the webhook secret of an agent is never lost when the notifier is down at
 * registration, a webhook is never sent unsigned, and the secret shown is the one that signs.
 * The notifier is a real process, stalled with SIGSTOP.
 */
describe('webhook secrets when the notifier is down at registration', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let db: pg.Client;
  const processes: ServiceProcess[] = [];

  /** The agent's stored secret, opened (it is stored sealed). */
  async function storedSecret(handle: string): Promise<string | null> {
    const result = await db.query('SELECT secret FROM "notifier"."webhook_secrets" WHERE handle = $1', [handle]);
    const sealed = (result.rows[0]?.secret as string | undefined) ?? null;
    if (sealed === null) return null;
    expect(SecretCipher.isSealed(sealed)).toBe(true);
    return SecretCipher.fromConfig(TEST_SECRET_KEYS).open(sealed);
  }

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms' },
    });
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    for (const started of processes) {
      started.signal('SIGCONT');
      await started.kill();
    }
    await relay?.stop();
    await db?.end();
    await sink?.stop();
  });

  it('answers 503 and creates nothing while the notifier is stalled; then the secret shown is the one that signs', async () => {
    await relay.stopService('notifier');
    const notifier = await ServiceProcess.start(relay, 'notifier');
    processes.push(notifier);
    const sender = await registerAgent(relay, { handle: uniqueHandle('outage-s', 'acme'), name: 'Sender' });
    const handle = uniqueHandle('outage-r', 'acme');
    const path = `/${handle}/hook`;
    const body = { handle, name: 'Recipient', notification_webhook_url: sink.url(path) };

    notifier.signal('SIGSTOP');
    let refused: request.Response;
    try {
      refused = await request(relay.url).post('/admin/agents').set(admin).send(body);
    } finally {
      notifier.signal('SIGCONT');
    }
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatchObject({ reason: 'service_unavailable', message: expect.stringContaining('nothing was created') });
    await request(relay.url).get(`/admin/agents/${handle}`).set(admin).expect(404);
    // The resumed notifier now reads the request its caller gave up on: it must not store a secret nobody saw.
    await notifier.waitForOutput(
      /request not started: its caller stopped waiting|refused a webhook secret request that arrived after its caller gave up/,
      30000,
    );
    expect(await storedSecret(handle)).toBeNull();

    const registered = await request(relay.url).post('/admin/agents').set(admin).send(body).expect(201);
    const shown = registered.body.webhook_secret as string;
    expect(shown).toMatch(WEBHOOK_SECRET);
    expect(await storedSecret(handle)).toBe(shown);

    const task = await createHandoff(relay.url, sender, registered.body);
    await eventually(() => sink.to(path).length === 1, 20000);
    const [webhook] = sink.to(path);
    expect(JSON.parse(webhook.body).data.task_id).toBe(task);
    expect(verifyStandardWebhook(webhook, shown)).toBe(true);
  }, 90000);

  it('never sends a webhook unsigned: without a secret it waits, and goes out signed once one is made', async () => {
    if (!relay.services.get('notifier')) await relay.startService('notifier');
    const sender = await registerAgent(relay, { handle: uniqueHandle('unsigned-s', 'acme'), name: 'Sender' });
    const handle = uniqueHandle('unsigned-r', 'acme');
    const path = `/${handle}/hook`;
    const recipient = await registerAgent(relay, { handle, name: 'Recipient', notification_webhook_url: sink.url(path) });
    // An agent registered before secrets were required (or whose secret was lost) has none.
    await db.query('DELETE FROM "notifier"."webhook_secrets" WHERE handle = $1', [handle]);

    const task = await createHandoff(relay.url, sender, recipient);
    const delivery = (await eventually(async () => {
      const listed = await request(relay.url)
        .get(`/admin/deliveries?task_id=${encodeURIComponent(task)}`)
        .set(admin)
        .expect(200);
      const found = (listed.body.deliveries as Array<{ id: string; attempts: number; last_error: string | null }>).find((entry) => entry.attempts >= 2);
      return found ?? false;
    }, 20000)) as { id: string; attempts: number; last_error: string | null };
    expect(delivery.last_error).toMatch(/no webhook signing secret/);
    expect(sink.to(path)).toHaveLength(0);

    const rotated = await request(relay.url).post(`/admin/agents/${handle}/webhook-secret`).set(admin).expect(201);
    await request(relay.url).post(`/admin/deliveries/${delivery.id}/redeliver`).set(admin).expect(202);
    await eventually(() => sink.to(path).length >= 1, 20000);
    for (const webhook of sink.to(path)) expect(verifyStandardWebhook(webhook, rotated.body.webhook_secret)).toBe(true);
  }, 90000);
});
