import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { type Client } from '@a2a-js/sdk/client';
import { MetricsServer } from '@app/metrics';
import type { AgentRecord, DeliveryView, UpstreamStatusView } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient } from './support/sdk-client';
import { issueTestCertificates, type TestCertificates } from './support/test-certificates';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;

async function send(client: Client, text: string): Promise<Task> {
  const message: Message = {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId: '',
    contextId: '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  return (await client.sendMessage({
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  })) as Task;
}

async function completed(client: Client, taskId: string): Promise<Task> {
  return eventually(
    async () => {
      const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      return task;
    },
    30_000,
    100,
  );
}

describe('Upstream agents over mTLS: a real A2A server behind https that requires client certificates', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  let certs: TestCertificates;
  let upstream: UpstreamAgent;

  beforeAll(async () => {
    certs = issueTestCertificates();
    upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', tls: { ...certs.server, ca: certs.ca } });
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: '500',
        RELAY_NOTIFIER_BREAKER_FAILURES: '1000',
        RELAY_UPSTREAM_CARD_REFRESH_MS: '0',
      },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upmtls'), name: 'Alice' });
  });

  afterAll(async () => {
    await upstream?.close();
    await relay?.stop();
  });

  const admin = () => request(relay.url);

  it('without a client certificate the card cannot be read: 400 and nothing created; a key that is not the certificate’s is a 400', async () => {
    const handle = uniqueHandle('nocert', 'upmtls');
    const refused = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({
        handle,
        name: 'Secure',
        upstream: { card_url: upstream.cardUrl, tls: { ca: certs.ca, client_cert: certs.client.cert, client_key: certs.strangerClient.key } },
      });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe('tls.client_key: is not the private key of tls.client_cert');
    const noCert = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Secure', upstream: { card_url: upstream.cardUrl } });
    expect(noCert.status).toBe(400);
    expect(noCert.body.error.message).toMatch(/^upstream\.card_url: the agent card could not be read \(.*certificate/);
    expect((await admin().get(`/admin/agents/${handle}`).set('authorization', ADMIN)).status).toBe(404);
    const notPem = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Secure', upstream: { card_url: upstream.cardUrl, tls: { client_cert: 'nope', client_key: certs.client.key } } });
    expect(notPem.status).toBe(400);
    expect(JSON.stringify(notPem.body)).toContain('tls.client_cert must be a PEM certificate');
  });

  it('with its certificate every call goes over mTLS; a stranger certificate fails the delivery visibly; a rotation back delivers it, without a restart', async () => {
    const handle = uniqueHandle('secure', 'upmtls');
    const registered = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({
        handle,
        name: 'Secure',
        upstream: { card_url: upstream.cardUrl, tls: { ca: certs.ca, ...{ client_cert: certs.client.cert, client_key: certs.client.key } } },
      });
    expect(registered.status).toBe(201);
    expect((registered.body.agent as AgentRecord).upstream?.url).toBe(upstream.url);
    expect(upstream.url.startsWith('https://')).toBe(true);
    const status = (await admin().get(`/admin/agents/${handle}/upstream`).set('authorization', ADMIN).expect(200)).body as UpstreamStatusView;
    expect(status.tls).toMatchObject({ client_cert_subject: 'CN=relay-client', ca: true });
    // The key is never shown back.
    const keyBody = certs.client.key.split('\n')[1];
    expect(JSON.stringify(registered.body)).not.toContain(keyBody);
    expect(JSON.stringify(status)).not.toContain(keyBody);

    const client = await senderClient(relay, sender, handle);
    const first = await completed(client, (await send(client, 'over mTLS')).id);
    expect(first.history.some((message) => message.role === Role.ROLE_AGENT)).toBe(true);
    expect(upstream.tasksCreated).toHaveLength(1);

    // A certificate the server does not trust: the next handoff is not delivered, and says why.
    const stranger = await admin()
      .put(`/admin/agents/${handle}/upstream/tls`)
      .set('authorization', ADMIN)
      .send({ ca: certs.ca, client_cert: certs.strangerClient.cert, client_key: certs.strangerClient.key });
    expect(stranger.status).toBe(200);
    expect((stranger.body as UpstreamStatusView).tls?.client_cert_subject).toBe('CN=stranger-client');
    expect(JSON.stringify(stranger.body)).not.toContain(certs.strangerClient.key.split('\n')[1]);
    const blocked = await send(client, 'with the wrong certificate');
    const failing = await eventually(
      async () => {
        const listed = (await admin().get(`/admin/deliveries?task_id=${blocked.id}`).set('authorization', ADMIN).expect(200)).body.deliveries as DeliveryView[];
        const delivery = listed.find((entry) => entry.channel === 'upstream');
        expect(delivery?.status).toBe('failed');
        expect(delivery?.last_error).toContain('it may not accept the client certificate');
        return delivery as DeliveryView;
      },
      20_000,
      200,
    );
    expect(failing.attempts).toBeGreaterThanOrEqual(1);
    expect(upstream.tasksCreated).toHaveLength(1);
    const health = await eventually(async () => {
      const shown = ((await admin().get(`/admin/agents/${handle}/upstream`).set('authorization', ADMIN).expect(200)).body as UpstreamStatusView).health;
      expect(shown.last_failure_method).toBe('SendMessage');
      return shown;
    }, 10_000);
    expect(health.last_failure_reason).toMatch(/^tls: the server closed the TLS connection right after the handshake/);
    const notifier = relay.services.get('notifier')![0];
    const scrape = PrometheusScrape.parse(await (await fetch(`${notifier.get(MetricsServer).url}/metrics`)).text());
    expect(scrape.value('agentrelay_upstream_call_errors_total', { agent: handle, method: 'SendMessage', kind: 'tls' })).toBeGreaterThanOrEqual(1);

    // Rotated to another certificate of the trusted CA: the retries of the same delivery get through.
    await admin()
      .put(`/admin/agents/${handle}/upstream/tls`)
      .set('authorization', ADMIN)
      .send({ ca: certs.ca, client_cert: certs.rotatedClient.cert, client_key: certs.rotatedClient.key })
      .expect(200);
    await completed(client, blocked.id);
    expect(upstream.tasksCreated).toHaveLength(2);

    // Removed: no certificate, no delivery.
    const removed = await admin().delete(`/admin/agents/${handle}/upstream/tls`).set('authorization', ADMIN).expect(200);
    expect((removed.body as UpstreamStatusView).tls).toBeNull();
    const refresh = await admin().post(`/admin/agents/${handle}/upstream/refresh`).set('authorization', ADMIN).expect(200);
    expect(refresh.body.refresh.outcome).toBe('failed');
  });
});
