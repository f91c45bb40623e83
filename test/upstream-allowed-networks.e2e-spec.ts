import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import request from 'supertest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import type { DeliveryView } from '@app/contracts';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';
import { WebhookSink } from './support/webhook-sink';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;
const SETTING = 'RELAY_UPSTREAM_ALLOWED_NETWORKS';

function texts(message: Pick<Message, 'parts'>): string[] {
  return message.parts.flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
}

/** Every log line the relay's processes write, parsed. */
function logCollector(): { lines: Array<Record<string, unknown>>; stream: Writable } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, stream };
}

describe('an upstream agent on an allowlisted private network, with the webhook guard on', () => {
  let relay: RelayHarness;
  let upstream: UpstreamAgent;
  let sink: WebhookSink;
  let sender: RegisteredTestAgent;
  const logs = logCollector();

  beforeAll(async () => {
    upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    sink = await WebhookSink.start();
    // No RELAY_WEBHOOK_ALLOW_PRIVATE: only the upstream allowlist lets loopback through.
    relay = await RelayHarness.start({
      env: { [SETTING]: '127.0.0.0/8', LOG_LEVEL: 'info', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms', RELAY_UPSTREAM_POLL_MIN_MS: '100' },
      logDestination: logs.stream,
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'allow'), name: 'Alice', notification_webhook_url: sink.url('/alice') });
  });

  afterAll(async () => {
    await relay?.stop();
    await upstream?.close();
    await sink?.stop();
  });

  it('says at start which private networks upstream agents may be on, and warns of nothing', () => {
    const notifierLines = logs.lines.filter((line) => line.service === 'notifier' && line.context === 'SsrfGuard');
    expect(notifierLines).toEqual([
      expect.objectContaining({ level: 'info', msg: `upstream agents may be on these private networks and hosts (${SETTING}): 127.0.0.0/8` }),
    ]);
  });

  it('registers the loopback agent and delivers a handoff to it, while a loopback webhook is still refused', async () => {
    const handle = uniqueHandle('planner', 'allow');
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Planner', upstream: { card_url: upstream.cardUrl } });
    expect(registered.status).toBe(201);
    expect(registered.body.agent.upstream).toMatchObject({ card_url: upstream.cardUrl, url: upstream.url });

    const client = await senderClient(relay, sender, handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage('plan the migration'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    const done = await eventually(
      async () => {
        const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        return task;
      },
      30_000,
      100,
    );
    expect(done.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain('echo: plan the migration');
    expect(upstream.tasksCreated.map(texts)).toEqual([['plan the migration']]);

    // The sender's webhook on loopback is refused (a dead letter, nothing sent): the allowlist is the upstream agents' only.
    const webhooks = await eventually(async () => {
      const response = await request(relay.url).get(`/admin/deliveries?task_id=${sent.id}`).set('authorization', ADMIN);
      const found = (response.body.deliveries as DeliveryView[]).filter((delivery) => delivery.channel === 'webhook');
      expect(found.length).toBeGreaterThan(0);
      expect(found.every((delivery) => delivery.status === 'dead')).toBe(true);
      return found;
    }, 30_000);
    for (const delivery of webhooks) expect(delivery.last_error).toBe(`refused: address 127.0.0.1 is not allowed`);
    expect(sink.requests).toHaveLength(0);
  });

  it('refuses an agent outside the allowlist with one message that names the setting', async () => {
    const handle = uniqueHandle('outside', 'allow');
    // [::1] is loopback too, but not in 127.0.0.0/8: refused before any connection.
    const cardUrl = `http://[::1]:${upstream.port}/.well-known/agent-card.json`;
    const refused = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Outside', upstream: { card_url: cardUrl } });
    expect(refused.status).toBe(400);
    const message = `upstream.card_url: the agent card could not be read (refused: address ::1 is not allowed: it is loopback, private or reserved and not in ${SETTING})`;
    expect(refused.body.error).toMatchObject({ reason: 'invalid_params', message });

    let stderr = '';
    const code = await run(
      ['register', handle, '--name', 'Outside', '--card-url', cardUrl],
      { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      { stdout: () => undefined, stderr: (text) => (stderr += text), readFile: async () => '' },
    );
    expect(code).toBe(EXIT.apiError);
    expect(stderr.split(SETTING)).toHaveLength(2);
    expect(
      (
        await request(relay.url)
          .get(`/admin/agents/${encodeURIComponent(handle)}`)
          .set('authorization', ADMIN)
      ).status,
    ).toBe(404);
  });
});

describe('the SSRF guard switched off for every request', () => {
  it('is a warning at start', async () => {
    const logs = logCollector();
    const relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', LOG_LEVEL: 'info' }, logDestination: logs.stream });
    try {
      const warning = logs.lines.find((line) => line.context === 'SsrfGuard');
      expect(warning).toMatchObject({ level: 'warn', service: 'notifier' });
      expect(warning?.msg).toContain('RELAY_WEBHOOK_ALLOW_PRIVATE is true: the SSRF guard is off');
    } finally {
      await relay.stop();
    }
  });

  it('through a /0 upstream network is a warning at start too', async () => {
    const logs = logCollector();
    const relay = await RelayHarness.start({
      env: { [SETTING]: `0.0.0.0/0,${randomUUID().slice(0, 8)}.corp.example`, LOG_LEVEL: 'info' },
      logDestination: logs.stream,
    });
    try {
      const warning = logs.lines.find((line) => line.context === 'SsrfGuard');
      expect(warning).toMatchObject({ level: 'warn', service: 'notifier' });
      expect(warning?.msg).toContain('a /0 network turns the SSRF guard off for upstream agents');
    } finally {
      await relay.stop();
    }
  });
});
