import { randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import request from 'supertest';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { type Client } from '@a2a-js/sdk/client';
import { prefixedSubject, TASKS_SUBJECTS, type AgentRecord, type DeliveryView } from '@app/contracts';
import { eventually } from './support/eventually';
import { testNatsUrl } from './support/test-env';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { nextEvent, senderClient } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { WebhookSink } from './support/webhook-sink';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { DEFAULT_TEST_AUDIENCE, TestOpenIdProvider } from './support/openid-provider';
import { EXIT, run } from '../apps/cli/src/cli';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;

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

/** Reads a stream of the sender's until an event in one of these states (the stream may end there, or go on). */
async function readUntil(events: AsyncGenerator<StreamResponse, void, undefined>, states: TaskState[]): Promise<StreamResponse[]> {
  const seen: StreamResponse[] = [];
  for await (const event of events) {
    seen.push(event);
    const state =
      event.payload?.$case === 'task'
        ? event.payload.value.status?.state
        : event.payload?.$case === 'statusUpdate'
          ? event.payload.value.status?.state
          : undefined;
    if (state !== undefined && states.includes(state)) break;
  }
  return seen;
}

/** The texts of the agent messages and artifacts a sender's stream carried. */
function streamed(events: StreamResponse[]): { messages: string[]; artifacts: string[]; states: TaskState[] } {
  const messages: string[] = [];
  const artifacts: string[] = [];
  const states: TaskState[] = [];
  for (const event of events) {
    const payload = event.payload;
    if (payload?.$case === 'task' && payload.value.status) states.push(payload.value.status.state);
    if (payload?.$case === 'statusUpdate' && payload.value.status) {
      states.push(payload.value.status.state);
      messages.push(...texts(payload.value.status.message));
    }
    if (payload?.$case === 'message' && payload.value.role === Role.ROLE_AGENT) messages.push(...texts(payload.value));
    if (payload?.$case === 'artifactUpdate') artifacts.push(...texts({ parts: payload.value.artifact?.parts ?? [] } as unknown as Message));
  }
  return { messages, artifacts, states };
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
        RELAY_UPSTREAM_POLL_MAX_MS: '1000',
        RELAY_UPSTREAM_STREAM_IDLE_MS: '1500',
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

  it.each([{ streaming: false }, { streaming: true }])(
    'input-required round trip (streaming card: $streaming): the upstream asks, the sender answers on the relay task, the answer goes upstream on its task and the upstream completes; seen through a stream and a webhook',
    async ({ streaming }) => {
      const sink = await WebhookSink.start();
      try {
        const asker = await registerAgent(relay, { handle: uniqueHandle('asker', 'upco'), name: 'Asker', notification_webhook_url: sink.url('/asker') });
        const upstream = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '1.0', behaviour: 'ask', streaming });
        upstreams.push(upstream);
        const handle = uniqueHandle('quiz', 'upco');
        expect((await registerUpstream(relay, handle, { card_url: upstream.cardUrl })).status).toBe(201);
        const client = await senderClient(relay, asker, handle);

        const first = await readUntil(
          client.sendMessageStream({ tenant: '', message: userMessage('paint the shed'), configuration: undefined, metadata: undefined }),
          [TaskState.TASK_STATE_INPUT_REQUIRED],
        );
        const asked = streamed(first);
        expect(asked.states.at(-1)).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
        expect(asked.messages).toContain('Which colour?');
        const taskId = first[0].payload?.$case === 'task' ? first[0].payload.value.id : '';
        const contextId = first[0].payload?.$case === 'task' ? first[0].payload.value.contextId : '';
        expect(taskId).not.toBe('');

        const reply = { ...userMessage('blue'), taskId, contextId };
        const second = streamed(
          await readUntil(client.sendMessageStream({ tenant: '', message: reply, configuration: undefined, metadata: undefined }), [
            TaskState.TASK_STATE_COMPLETED,
            TaskState.TASK_STATE_FAILED,
          ]),
        );
        expect(second.states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(second.messages).toContain('echo: blue');
        expect(second.artifacts).toContain('BLUE');

        // GetTask: the question, the sender's answer and the upstream's answer, in that order.
        const task = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
        expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        expect(task.history.flatMap((message) => texts(message).map((text) => `${message.role === Role.ROLE_AGENT ? 'agent' : 'user'}: ${text}`))).toEqual([
          'user: paint the shed',
          'agent: Which colour?',
          'user: blue',
          'agent: echo: blue',
        ]);
        // Upstream: one task, the reply on it with the relay's message id.
        expect(upstream.tasksCreated).toHaveLength(1);
        const [upstreamTask] = [...upstream.tasks.values()];
        expect(upstream.received.map(texts)).toEqual([['paint the shed'], ['blue']]);
        expect(upstream.received[1]).toMatchObject({ messageId: reply.messageId, taskId: upstreamTask.id, contextId: upstreamTask.contextId });
        expect(upstreamTask.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);

        // The sender's webhook: asked, then completed with the upstream's answer, each signed.
        const hooks = await eventually(() => {
          const bodies = sink.to('/asker').map((hook) => ({
            hook,
            body: JSON.parse(hook.body) as { type: string; data: { task_id: string; task: { latest_message: { body: string } | null } } },
          }));
          const mine = bodies.filter(({ body }) => body.data.task_id === taskId);
          expect(mine.map(({ body }) => body.type)).toEqual(expect.arrayContaining(['a2a.task.input_required', 'a2a.task.completed']));
          return mine;
        }, 20_000);
        expect(hooks.every(({ hook }) => verifyStandardWebhook(hook, asker.webhook_secret as string))).toBe(true);
        expect(hooks.find(({ body }) => body.type === 'a2a.task.completed')?.body.data.task.latest_message?.body).toBe('echo: blue');
        expect(hooks.find(({ body }) => body.type === 'a2a.task.input_required')?.body.data.task.latest_message?.body).toBe('Which colour?');
      } finally {
        await sink.stop();
      }
    },
  );

  it.each([
    { behaviour: 'echo' as const, state: TaskState.TASK_STATE_COMPLETED },
    { behaviour: 'ask' as const, state: TaskState.TASK_STATE_INPUT_REQUIRED },
  ])(
    'a blocking SendMessage answers with the task as GetTask then shows it ($behaviour), made from the events the edge heard without reading the task back',
    async ({ behaviour, state }) => {
      const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', behaviour });
      upstreams.push(upstream);
      const handle = uniqueHandle('blocking', 'upco');
      expect((await registerUpstream(relay, handle, { card_url: upstream.cardUrl })).status).toBe(201);
      const client = await senderClient(relay, sender, handle);
      const nats = await connect({ servers: testNatsUrl(), name: 'test-task-reads-spy' });
      try {
        const reads: string[] = [];
        nats.subscribe(prefixedSubject(relay.subjectPrefix, TASKS_SUBJECTS.get), {
          callback: (_error, message) => {
            reads.push(message.string());
          },
        });
        await nats.flush();

        const answered = (await client.sendMessage({
          tenant: '',
          message: userMessage('paint the shed'),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
          metadata: undefined,
        })) as Task;
        expect(answered.status?.state).toBe(state);
        expect(answered.history.length).toBeGreaterThanOrEqual(2);
        if (behaviour === 'echo') expect(answered.artifacts.map((artifact) => artifact.artifactId)).toEqual(['echo-result']);
        await nats.flush();
        expect(reads.filter((read) => read.includes(answered.id))).toEqual([]);

        expect(await client.getTask({ tenant: '', id: answered.id, historyLength: undefined })).toEqual(answered);
      } finally {
        await nats.drain();
      }
    },
  );

  it('the sender cancels: the relay task is canceled and the cancel goes upstream as CancelTask', async () => {
    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '0.3', behaviour: 'wait' });
    upstreams.push(upstream);
    const handle = uniqueHandle('slow', 'upco');
    expect((await registerUpstream(relay, handle, { card_url: upstream.cardUrl })).status).toBe(201);
    const client = await senderClient(relay, sender, handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage('take your time'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    await eventually(
      async () => expect((await client.getTask({ tenant: '', id: sent.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_WORKING),
      20_000,
    );
    const canceled = await client.cancelTask({ tenant: '', id: sent.id, metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const upstreamTask = await eventually(() => {
      const [only] = [...upstream.tasks.values()];
      expect(only?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      return only;
    }, 20_000);
    expect(upstream.tasksCreated).toHaveLength(1);
    await eventually(async () => {
      const response = await request(relay.url).get(`/admin/deliveries?task_id=${sent.id}`).set('authorization', ADMIN);
      expect(
        (response.body.deliveries as DeliveryView[])
          .filter((delivery) => delivery.channel === 'upstream')
          .map((delivery) => [delivery.event, delivery.status])
          .sort(),
      ).toEqual([
        ['a2a.task.canceled', 'succeeded'],
        ['a2a.task.created', 'succeeded'],
      ]);
    }, 20_000);
    // The relay task stays canceled (the upstream's own canceled state does not turn it into a failure).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await client.getTask({ tenant: '', id: sent.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(upstreamTask.id).toBeTruthy();
  });

  it.each([
    { binding: 'JSONRPC' as const, card: '1.0' as const },
    { binding: 'HTTP+JSON' as const, card: '0.3' as const },
  ])(
    '$binding server, v$card card declaring streaming: delivered with SendStreamingMessage and followed on that stream, never polled',
    async ({ binding, card }) => {
      const upstream = await startUpstreamAgent({ binding, card, streaming: true });
      upstreams.push(upstream);
      const handle = uniqueHandle('streamer', 'upco');
      const registered = await registerUpstream(relay, handle, { card_url: upstream.cardUrl });
      expect(registered.status).toBe(201);
      expect((registered.body.agent as AgentRecord).upstream).toMatchObject({ streaming: true, binding, protocol_version: card });
      const client = await senderClient(relay, sender, handle);
      const task = await handOff(client, `stream over ${binding}`);
      expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain(`echo: stream over ${binding}`);
      expect(task.artifacts.map((artifact) => texts({ parts: artifact.parts } as Message))).toEqual([[`STREAM OVER ${binding}`]]);
      expect(upstream.tasksCreated).toHaveLength(1);
      // One request, a stream (SSE), and nothing else: no GetTask.
      const a2aCalls = upstream.calls.filter((call) => call.path !== '/.well-known/agent-card.json');
      expect(a2aCalls).toHaveLength(1);
      expect(a2aCalls[0].headers.accept).toContain('text/event-stream');
    },
  );

  it('the upstream killed mid-stream: the relay resumes with SubscribeToTask on the revived server and loses no event; the sender’s own stream sees all of it', async () => {
    const upstream = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '1.0', streaming: true, behaviour: 'gated' });
    upstreams.push(upstream);
    const handle = uniqueHandle('flaky', 'upco');
    expect((await registerUpstream(relay, handle, { card_url: upstream.cardUrl })).status).toBe(201);
    const client = await senderClient(relay, sender, handle);
    const events = client.sendMessageStream({ tenant: '', message: userMessage('long job'), configuration: undefined, metadata: undefined });
    const first = await nextEvent(events);
    const relayTaskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
    expect(relayTaskId).not.toBe('');
    const senderStream = readUntil(events, [TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED]);
    await upstream.atGate;
    await eventually(async () => {
      const task = await client.getTask({ tenant: '', id: relayTaskId, historyLength: undefined });
      expect(task.history.flatMap(texts)).toContain('step 1 done');
      expect(task.artifacts.map((artifact) => texts({ parts: artifact.parts } as Message))).toEqual([['part 1;']]);
    }, 20_000);

    await upstream.kill();
    const before = upstream.calls.length;
    await upstream.revive();
    const subscribed = await eventually(() => {
      const again = upstream.calls.slice(before).filter((call) => call.path.endsWith(':subscribe'));
      expect(again.length).toBeGreaterThanOrEqual(1);
      return again;
    }, 20_000);
    expect(subscribed[0].headers.accept).toContain('text/event-stream');
    upstream.openGate();

    const task = await eventually(
      async () => {
        const current = await client.getTask({ tenant: '', id: relayTaskId, historyLength: undefined });
        expect(current.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        return current;
      },
      30_000,
      100,
    );
    expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toEqual(['step 1 done', 'echo: long job']);
    expect(Object.fromEntries(task.artifacts.map((artifact) => [artifact.artifactId, texts({ parts: artifact.parts } as Message)]))).toEqual({
      log: ['part 1;', 'part 2'],
      'echo-result': ['LONG JOB'],
    });
    expect(upstream.tasksCreated).toHaveLength(1);
    // No GetTask: the relay followed the stream, then the resumed one.
    expect(upstream.calls.filter((call) => call.method === 'GET' && /\/tasks\/[^/:]+$/.test(call.path))).toEqual([]);

    const seen = streamed(await senderStream);
    expect(seen.states.at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(seen.messages).toEqual(expect.arrayContaining(['step 1 done', 'echo: long job']));
    expect(seen.artifacts).toEqual(expect.arrayContaining(['part 1;', 'LONG JOB']));
    expect(seen.artifacts.join('')).toContain('part 2');
  });

  it('a stream that stays quiet (RELAY_UPSTREAM_STREAM_IDLE_MS) is closed and subscribed to again; the task still completes once', async () => {
    const upstream = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '0.3', streaming: true, behaviour: 'gated' });
    upstreams.push(upstream);
    const handle = uniqueHandle('quiet', 'upco');
    expect((await registerUpstream(relay, handle, { card_url: upstream.cardUrl })).status).toBe(201);
    const client = await senderClient(relay, sender, handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage('slow and quiet'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    await upstream.atGate;
    // The first stream (SendStreamingMessage) is still open at the gate: only the idle limit makes the relay subscribe.
    await eventually(() => expect(upstream.calls.filter((call) => call.path.endsWith(':subscribe')).length).toBeGreaterThanOrEqual(1), 20_000);
    upstream.openGate();
    const task = await eventually(
      async () => {
        const current = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        expect(current.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        return current;
      },
      30_000,
      100,
    );
    expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toEqual(['step 1 done', 'echo: slow and quiet']);
    expect(upstream.tasksCreated).toHaveLength(1);
  });

  it('OAuth2 client credentials: the relay gets tokens from a real oidc-provider (the token URL from the card), keeps one across handoffs, gets a new one when the upstream refuses it', async () => {
    const provider = await TestOpenIdProvider.start({ clients: [{ clientId: 'relay-at-planner', clientSecret: 'planner-client-secret' }] });
    try {
      const revoked = new Set<string>();
      const keys = createLocalJWKSet({ keys: provider.signingKeys.map((key) => key.publicJwk) });
      const verifyAuthorization = async (authorization: string | undefined): Promise<boolean> => {
        if (!authorization?.startsWith('Bearer ')) return false;
        const token = authorization.slice('Bearer '.length);
        const { payload } = await jwtVerify(token, keys, { issuer: provider.issuer, audience: DEFAULT_TEST_AUDIENCE });
        return payload.client_id === 'relay-at-planner' && !revoked.has(token);
      };
      const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', oauth2TokenUrl: provider.tokenEndpoint, verifyAuthorization });
      upstreams.push(upstream);
      const handle = uniqueHandle('oauth', 'upco');
      const registered = await registerUpstream(relay, handle, {
        card_url: upstream.cardUrl,
        auth: { scheme: 'oauth2', client_id: 'relay-at-planner', secret: 'planner-client-secret' },
      });
      expect(registered.status).toBe(201);
      expect((registered.body.agent as AgentRecord).upstream).toMatchObject({ auth_scheme: 'oauth2', auth_header: 'Authorization' });
      expect(JSON.stringify(registered.body)).not.toContain('planner-client-secret');
      // The registration asked for one token (the credentials work), and the relay keeps it.
      expect(provider.requestCount('/token')).toBe(1);

      const client = await senderClient(relay, sender, handle);
      for (const text of ['first', 'second']) {
        const task = await handOff(client, text);
        expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain(`echo: ${text}`);
      }
      expect(provider.requestCount('/token')).toBe(1);
      const bearer = upstream.calls.filter((call) => call.path !== '/.well-known/agent-card.json').map((call) => call.headers.authorization);
      expect(new Set(bearer).size).toBe(1);

      // The upstream stops taking that token (revoked): the relay's next request is a 401, then it gets a new token.
      revoked.add(String(bearer[0]).slice('Bearer '.length));
      const third = await handOff(client, 'third');
      expect(third.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain('echo: third');
      expect(provider.requestCount('/token')).toBe(2);
      expect(upstream.tasksCreated).toHaveLength(3);
      expect(upstream.calls.at(-1)?.headers.authorization).not.toBe(bearer[0]);
    } finally {
      await provider.stop();
    }
  });

  it('OAuth2 client credentials the token URL refuses, or without a client id or token URL, are a 400 naming the field; no agent is created', async () => {
    const provider = await TestOpenIdProvider.start({ clients: [{ clientId: 'known', clientSecret: 'right-secret' }] });
    try {
      const withTokenUrl = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', oauth2TokenUrl: provider.tokenEndpoint });
      const withoutTokenUrl = await startUpstreamAgent({ binding: 'JSONRPC', card: '0.3' });
      upstreams.push(withTokenUrl, withoutTokenUrl);
      const handle = uniqueHandle('refused', 'upco');
      const wrongSecret = await registerUpstream(relay, handle, {
        card_url: withTokenUrl.cardUrl,
        auth: { scheme: 'oauth2', client_id: 'known', secret: 'wrong' },
      });
      expect(wrongSecret.status).toBe(400);
      expect(wrongSecret.body.error).toMatchObject({ reason: 'invalid_params', message: 'auth.secret: the token URL answered 401 (invalid_client)' });
      const noClient = await registerUpstream(relay, handle, { card_url: withTokenUrl.cardUrl, auth: { scheme: 'oauth2', secret: 'right-secret' } });
      expect(noClient.status).toBe(400);
      expect(JSON.stringify(noClient.body.error)).toContain('auth.client_id is required with auth.scheme oauth2');
      const noTokenUrl = await registerUpstream(relay, handle, {
        card_url: withoutTokenUrl.cardUrl,
        auth: { scheme: 'oauth2', client_id: 'known', secret: 'right-secret' },
      });
      expect(noTokenUrl.status).toBe(400);
      expect(noTokenUrl.body.error.message).toBe('auth.token_url: the card names no OAuth2 client-credentials token URL: give auth.token_url');
      // Given by the admin, the token URL is used although the card names none.
      const given = await registerUpstream(relay, handle, {
        card_url: withoutTokenUrl.cardUrl,
        auth: { scheme: 'oauth2', client_id: 'known', secret: 'right-secret', token_url: provider.tokenEndpoint, scope: 'agent' },
      });
      expect(given.status).toBe(201);

      // The CLI: oauth2 needs a client id; with one, the secret read from a file, the agent is registered.
      const io = (out: string[]) => ({
        stdout: (text: string) => out.push(text),
        stderr: (text: string) => out.push(text),
        readFile: async () => 'right-secret\n',
      });
      const env = { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN };
      const refused: string[] = [];
      const cliHandle = uniqueHandle('cli-oauth', 'upco');
      const base = [
        'register',
        cliHandle,
        '--name',
        'CLI OAuth',
        '--card-url',
        withTokenUrl.cardUrl,
        '--upstream-auth',
        'oauth2',
        '--upstream-secret-file',
        '/secret',
      ];
      expect(await run(base, env, io(refused))).toBe(EXIT.usage);
      expect(refused.join('')).toContain('--upstream-auth oauth2 needs --upstream-client-id <id>.');
      const out: string[] = [];
      expect(await run([...base, '--upstream-client-id', 'known', '--upstream-scope', 'agent'], env, io(out))).toBe(EXIT.ok);
      expect(out.join('')).toContain('auth oauth2)');
      expect(out.join('')).not.toContain('right-secret');
    } finally {
      await provider.stop();
    }
  });

  it('an attempt whose answer came too late is not sent again: the retry finds the task it made (ListTasks in the relay task’s context)', async () => {
    const upstream = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '1.0', delayFirstAnswerMs: 3000 });
    upstreams.push(upstream);
    const handle = uniqueHandle('late', 'upco');
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Late', webhook_timeout_ms: 1000, upstream: { card_url: upstream.cardUrl } });
    expect(registered.status).toBe(201);
    const task = await handOff(await senderClient(relay, sender, handle), 'answer me late');
    expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toContain('echo: answer me late');
    expect(upstream.tasksCreated).toHaveLength(1);
    expect(upstream.tasksCreated[0].contextId).toBe(task.contextId);
    expect(upstream.calls.some((call) => call.method === 'GET' && call.path === '/tasks')).toBe(true);
    const response = await request(relay.url).get(`/admin/deliveries?task_id=${task.id}`).set('authorization', ADMIN);
    const delivery = (response.body.deliveries as DeliveryView[]).find((entry) => entry.channel === 'upstream');
    expect(delivery).toMatchObject({ status: 'succeeded' });
    expect(delivery?.attempts).toBeGreaterThanOrEqual(2);
  });

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
