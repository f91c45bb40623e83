import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import type { AgentRecord, DeliveryView } from '@app/contracts';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { apiKeyInterceptor } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';
import { EXIT, run } from '../apps/cli/src/cli';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;

/** The sender: the official SDK client on the relay's endpoint of the upstream agent, discovered from the relay's card. */
function senderClient(relay: RelayHarness, sender: RegisteredTestAgent, handle: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory()],
      clientConfig: { interceptors: [apiKeyInterceptor(sender.api_key)] },
    }),
  );
  return factory.createFromUrl(`${relay.url}/a2a/${handle}/`);
}

function userMessage(text: string): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId: '',
    contextId: '',
    metadata: { ticket: 'T-1' },
    extensions: [],
    referenceTaskIds: [],
  };
}

function texts(message: Message | undefined): string[] {
  return (message?.parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
}

async function registerUpstream(relay: RelayHarness, handle: string, upstream: Record<string, unknown>): Promise<request.Response> {
  return request(relay.url).post('/admin/agents').set('authorization', ADMIN).send({ handle, name: 'Echo', upstream });
}

/** Sends through the relay and waits until the relay task shows the upstream's answer, artifact and completion. */
async function handOff(client: Client, text: string): Promise<Task> {
  const sent = (await client.sendMessage({
    tenant: '',
    message: userMessage(text),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  })) as Task;
  expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
  return eventually(
    async () => {
      const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      return task;
    },
    30_000,
    100,
  );
}

describe('Upstream A2A agents: a handoff to an agent that runs its own A2A server', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
      },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upco'), name: 'Alice' });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
  });

  it.each([
    { binding: 'JSONRPC' as const, card: '1.0' as const, auth: 'api_key' as const },
    { binding: 'HTTP+JSON' as const, card: '0.3' as const, auth: 'bearer' as const },
    { binding: 'JSONRPC' as const, card: '0.3' as const, auth: 'none' as const },
  ])(
    '$binding server, v$card card, $auth: the upstream gets one task, the sender sees its answer, artifact and completion',
    async ({ binding, card, auth }) => {
      const secret = `secret-${randomUUID()}`;
      const requireHeader =
        auth === 'api_key' ? { name: 'X-Upstream-Key', value: secret } : auth === 'bearer' ? { name: 'Authorization', value: `Bearer ${secret}` } : undefined;
      const upstream = await startUpstreamAgent({ binding, card, requireHeader });
      upstreams.push(upstream);
      const handle = uniqueHandle('echo', 'upco');
      const registered = await registerUpstream(relay, handle, {
        card_url: upstream.cardUrl,
        ...(auth === 'none' ? {} : { auth: { scheme: auth, secret } }),
      });
      expect(registered.status).toBe(201);
      const agent = registered.body.agent as AgentRecord;
      expect(agent.upstream).toMatchObject({
        card_url: upstream.cardUrl,
        url: upstream.url,
        binding,
        protocol_version: card,
        auth_scheme: auth,
        auth_header: auth === 'api_key' ? 'X-Upstream-Key' : auth === 'bearer' ? 'Authorization' : null,
      });
      // The credential is never shown back.
      expect(JSON.stringify(registered.body)).not.toContain(secret);
      const shown = await request(relay.url)
        .get(`/admin/agents/${encodeURIComponent(handle)}`)
        .set('authorization', ADMIN);
      expect(JSON.stringify(shown.body)).not.toContain(secret);
      expect(shown.body.skills).toEqual(['echo']);

      const client = await senderClient(relay, sender, handle);
      const task = await handOff(client, `hello over ${binding}`);

      const answers = task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts);
      expect(answers).toContain(`echo: hello over ${binding}`);
      expect(task.artifacts.map((artifact) => [artifact.artifactId, artifact.name, texts({ parts: artifact.parts } as Message)])).toEqual([
        ['echo-result', 'echo.txt', [`HELLO OVER ${binding}`]],
      ]);
      expect(upstream.tasksCreated).toHaveLength(1);
      const received = upstream.tasksCreated[0];
      expect(texts(received)).toEqual([`hello over ${binding}`]);
      // The relay's messageId, and who sent it, in the metadata and a header.
      expect(received.messageId).toBe(task.history.find((message) => message.role === Role.ROLE_USER)?.messageId);
      expect(received.metadata).toMatchObject({ ticket: 'T-1', agentrelay: { sender: sender.agent.handle, task_id: task.id } });
      expect(upstream.calls.some((call) => call.headers['x-agentrelay-sender'] === sender.agent.handle)).toBe(true);
      if (requireHeader) expect(upstream.calls.every((call) => call.headers[requireHeader.name.toLowerCase()] === requireHeader.value)).toBe(true);

      // Nothing more goes upstream once the task ended.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(upstream.tasksCreated).toHaveLength(1);
    },
  );

  it('an upstream that is down leaves the task submitted with a visible failed delivery, retried until it answers; one upstream task', async () => {
    const probe = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    const port = probe.port;
    const cardUrl = probe.cardUrl;
    const handle = uniqueHandle('later', 'upco');
    expect((await registerUpstream(relay, handle, { card_url: cardUrl })).status).toBe(201);
    await probe.close();

    const client = await senderClient(relay, sender, handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage('are you there?'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    const failed = await eventually(async () => {
      const response = await request(relay.url).get(`/admin/deliveries?task_id=${sent.id}`).set('authorization', ADMIN);
      const upstreamDeliveries = (response.body.deliveries as DeliveryView[]).filter((delivery) => delivery.channel === 'upstream');
      expect(upstreamDeliveries).toHaveLength(1);
      expect(upstreamDeliveries[0]).toMatchObject({ status: 'failed', target_handle: handle });
      expect(upstreamDeliveries[0].attempts).toBeGreaterThanOrEqual(1);
      return upstreamDeliveries[0];
    }, 20_000);
    expect(failed.last_error).toBeTruthy();
    expect((await client.getTask({ tenant: '', id: sent.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);

    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', port });
    upstreams.push(upstream);
    await eventually(
      async () => {
        const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain('echo: are you there?');
      },
      30_000,
      100,
    );
    expect(upstream.tasksCreated).toHaveLength(1);
    const response = await request(relay.url).get(`/admin/deliveries?task_id=${sent.id}`).set('authorization', ADMIN);
    expect((response.body.deliveries as DeliveryView[]).find((delivery) => delivery.channel === 'upstream')?.status).toBe('succeeded');
  });

  it('agentrelay register --card-url connects an existing A2A agent (the secret read from a file)', async () => {
    const secret = `cli-${randomUUID()}`;
    const upstream = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '1.0', requireHeader: { name: 'Authorization', value: `Bearer ${secret}` } });
    upstreams.push(upstream);
    const handle = uniqueHandle('cli', 'upco');
    let stdout = '';
    let stderr = '';
    const code = await run(
      ['register', handle, '--name', 'CLI echo', '--card-url', upstream.cardUrl, '--upstream-auth', 'bearer', '--upstream-secret-file', '/secret/file'],
      { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), readFile: async () => `${secret}\n` },
    );
    expect(stderr).toBe('');
    expect(code).toBe(EXIT.ok);
    expect(stdout).toContain(`Upstream A2A server: ${upstream.url} (HTTP+JSON, A2A 1.0, auth bearer)`);
    expect(stdout).not.toContain(secret);
    const task = await handOff(await senderClient(relay, sender, handle), 'via the CLI');
    expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain('echo: via the CLI');
    expect(upstream.tasksCreated).toHaveLength(1);
  });

  it('a card that cannot be read, or offers no interface the relay speaks, is a 400 naming it, and no agent is created', async () => {
    const handle = uniqueHandle('nocard', 'upco');
    const unreachable = await registerUpstream(relay, handle, { card_url: 'http://127.0.0.1:9/.well-known/agent-card.json' });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.error).toMatchObject({ reason: 'invalid_params' });
    expect(unreachable.body.error.message).toMatch(/^upstream\.card_url: the agent card could not be read/);
    const relayCard = await registerUpstream(relay, handle, {
      card_url: `${relay.url}/.well-known/agent-card.json?id=${encodeURIComponent(sender.agent.handle)}`,
    });
    expect(relayCard.status).toBe(400);
    expect(relayCard.body.error.message).toMatch(/^upstream\.card_url: /);
    const badAuth = await registerUpstream(relay, handle, { card_url: 'http://127.0.0.1:9/card', auth: { scheme: 'oauth', secret: 'x' } });
    expect(badAuth.status).toBe(400);
    expect(
      (
        await request(relay.url)
          .get(`/admin/agents/${encodeURIComponent(handle)}`)
          .set('authorization', ADMIN)
      ).status,
    ).toBe(404);
  });
});
