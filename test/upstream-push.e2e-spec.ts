import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { apiKeyInterceptor, nextEvent } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';
import { WebhookSink } from './support/webhook-sink';

function texts(message: { parts: Message['parts'] } | undefined): string[] {
  return (message?.parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
}

/**
 * An upstream whose card declares push notifications (and not streaming) is given the relay's own
 * receiver for each task; a task followed by push is polled only when a notification says so (the
 * safety poll here is ten minutes away), so the upstream's answer arriving proves the push worked.
 */
describe('Upstream A2A agents that push: the relay registers its own authenticated receiver per task', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  let sink: WebhookSink;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_PUSH_POLL_MS: '600000',
      },
    });
    // The notifier learns where the edge receives pushes once the edge has its port.
    await relay.stopService('notifier');
    await relay.startService('notifier', { RELAY_UPSTREAM_PUSH_URL: `${relay.url}/upstream-push` });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'uppush'), name: 'Alice', notification_webhook_url: sink.url('/alice') });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
    await sink?.stop();
  });

  it.each([
    { binding: 'JSONRPC' as const, card: '1.0' as const },
    { binding: 'HTTP+JSON' as const, card: '0.3' as const },
  ])(
    '$binding server, v$card card: the upstream pushes to the task’s receiver with its bearer token; each push has the task polled; the sender sees the answer through GetTask, a stream and a webhook',
    async ({ binding, card }) => {
      const upstream = await startUpstreamAgent({ binding, card, pushNotifications: true, behaviour: 'gated' });
      upstreams.push(upstream);
      const handle = uniqueHandle('pusher', 'uppush');
      const registered = await request(relay.url)
        .post('/admin/agents')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ handle, name: 'Pusher', upstream: { card_url: upstream.cardUrl } });
      expect(registered.status).toBe(201);
      expect(registered.body.agent.upstream).toMatchObject({ push_notifications: true, streaming: false });
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new JsonRpcTransportFactory()],
          clientConfig: { interceptors: [apiKeyInterceptor(sender.api_key)] },
        }),
      );
      const client = await factory.createFromUrl(`${relay.url}/a2a/${handle}/`);
      const sent = (await client.sendMessage({
        tenant: '',
        message: {
          messageId: randomUUID(),
          role: Role.ROLE_USER,
          parts: [{ content: { $case: 'text', value: 'push it' }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
          taskId: '',
          contextId: '',
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      })) as Task;
      await upstream.atGate;
      await eventually(async () => {
        const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        expect(task.history.flatMap(texts)).toContain('step 1 done');
      }, 20_000);

      // The stream is open (its first event, the task as it stands, has come) before the upstream may finish.
      const events = client.resubscribeTask({ tenant: '', id: sent.id });
      const first = await nextEvent(events);
      const stream = (async () => {
        const seen: StreamResponse[] = [first];
        for await (const event of events) {
          seen.push(event);
          if (event.payload?.$case === 'statusUpdate' && event.payload.value.status?.state === TaskState.TASK_STATE_COMPLETED) break;
        }
        return seen;
      })();
      const pushedBefore = upstream.pushes.length;
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
      expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toEqual(['step 1 done', 'echo: push it']);
      expect(Object.fromEntries(task.artifacts.map((artifact) => [artifact.artifactId, texts(artifact)]))).toEqual({
        log: ['part 1;', 'part 2'],
        'echo-result': ['PUSH IT'],
      });
      expect(upstream.tasksCreated).toHaveLength(1);

      // Every push went to this task's receiver with one bearer token; those after the gate were taken.
      const url = `${relay.url}/upstream-push/${encodeURIComponent(sent.id)}`;
      expect(upstream.pushes.length).toBeGreaterThan(pushedBefore);
      expect(new Set(upstream.pushes.map((push) => push.url))).toEqual(new Set([url]));
      const tokens = new Set(upstream.pushes.map((push) => push.authorization));
      expect(tokens.size).toBe(1);
      expect([...tokens][0]).toMatch(/^Bearer [A-Za-z0-9_-]{43}$/);
      expect(upstream.pushes.slice(pushedBefore).map((push) => push.status)).toEqual(upstream.pushes.slice(pushedBefore).map(() => 200));

      const streamed = await stream;
      expect(streamed.at(-1)?.payload).toMatchObject({ $case: 'statusUpdate' });
      expect(streamed.flatMap((event) => (event.payload?.$case === 'statusUpdate' ? texts(event.payload.value.status?.message) : []))).toContain(
        'echo: push it',
      );
      expect(streamed.some((event) => event.payload?.$case === 'artifactUpdate' && texts(event.payload.value.artifact).includes('PUSH IT'))).toBe(true);
      const hook = await eventually(() => {
        const found = sink.to('/alice').find((entry) => {
          const body = JSON.parse(entry.body) as { type: string; data: { task_id: string } };
          return body.type === 'a2a.task.completed' && body.data.task_id === sent.id;
        });
        expect(found).toBeDefined();
        return found!;
      }, 20_000);
      expect(verifyStandardWebhook(hook, sender.webhook_secret as string)).toBe(true);

      // The receiver takes only the task's own token: a wrong one, none, or another task is a 401 alike.
      const bearer = [...tokens][0] as string;
      const wrong = await request(relay.url)
        .post(`/upstream-push/${encodeURIComponent(sent.id)}`)
        .set('authorization', 'Bearer not-the-token')
        .send({});
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({ error: { reason: 'unauthenticated', message: 'Unknown task or wrong push notification token' } });
      expect(
        (
          await request(relay.url)
            .post(`/upstream-push/${encodeURIComponent(sent.id)}`)
            .send({})
        ).status,
      ).toBe(401);
      const otherTask = await request(relay.url).post('/upstream-push/01ARZ3NDEKTSV4RRFFQ69G5FAV').set('authorization', bearer).send({});
      expect(otherTask.status).toBe(401);
      expect(otherTask.body).toEqual(wrong.body);
      // Its own token, after the task ended: taken (the poll it asks for finds nothing more to do).
      expect(
        (
          await request(relay.url)
            .post(`/upstream-push/${encodeURIComponent(sent.id)}`)
            .set('authorization', bearer)
            .send({})
        ).status,
      ).toBe(200);
    },
  );
});
