import http from 'node:http';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { apiKeyInterceptor, userMessage } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

/** The failed-login budget the receiver shares (RELAY_AUTH_FAILURES_PER_WINDOW, its default). */
const FAILURES = 20;
const FLOOD_ADDRESS = '127.0.0.2';
const FLOOD_CONCURRENCY = 16;

interface PushAnswer {
  status: number;
  retryAfter?: string;
  reason?: string;
}

/** One push notification with a made-up token, from the flood's own loopback address. */
function badPush(baseUrl: string, taskId: string): Promise<PushAnswer> {
  return new Promise((resolve, reject) => {
    const call = http.request(
      `${baseUrl}/upstream-push/${encodeURIComponent(taskId)}`,
      {
        method: 'POST',
        localAddress: FLOOD_ADDRESS,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${randomBytes(32).toString('base64url')}` },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => {
          let reason: string | undefined;
          try {
            reason = (JSON.parse(text) as { error?: { reason?: string } }).error?.reason;
          } catch {
            reason = undefined;
          }
          resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] as string | undefined, reason });
        });
      },
    );
    call.on('error', reject);
    call.end('{}');
  });
}

function texts(message: { parts: Message['parts'] } | undefined): string[] {
  return (message?.parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
}

/**
 * An anonymous caller floods the push receiver with made-up tokens while a real upstream pushes
 * the progress of its tasks: the flood is refused 429 with Retry-After once its address has spent
 * the failure budget (the notifier is asked no more), and every push of the upstream is taken.
 * The safety poll is ten minutes away, so the tasks completing proves the pushes were heard.
 */
describe('the upstream push receiver throttles wrong tokens by their source', () => {
  let relay: RelayHarness;
  let upstream: UpstreamAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_PUSH_POLL_MS: '600000',
        RELAY_AUTH_FAILURES_PER_WINDOW: String(FAILURES),
        RELAY_AUTH_FAILURE_WINDOW_MS: '600000',
      },
    });
    await relay.stopService('notifier');
    await relay.startService('notifier', { RELAY_UPSTREAM_PUSH_URL: `${relay.url}/upstream-push` });
    upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', pushNotifications: true, behaviour: 'gated' });
  });

  afterAll(async () => {
    await upstream?.close();
    await relay?.stop();
  });

  it('refuses a flood of wrong tokens 429 with Retry-After while the upstream’s own pushes all succeed', async () => {
    const sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'pushflood'), name: 'Alice' });
    const handle = uniqueHandle('pusher', 'pushflood');
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ handle, name: 'Pusher', upstream: { card_url: upstream.cardUrl } });
    expect(registered.status).toBe(201);
    const client: Client = await new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory()],
        clientConfig: { interceptors: [apiKeyInterceptor(sender.api_key)] },
      }),
    ).createFromUrl(`${relay.url}/a2a/${handle}/`);
    const taskIds: string[] = [];
    for (const text of ['first', 'second']) {
      const sent = (await client.sendMessage({
        tenant: '',
        message: userMessage(text),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      })) as Task;
      taskIds.push(sent.id);
    }
    // Both tasks wait at the upstream's gate, followed by the relay.
    await eventually(async () => {
      for (const id of taskIds) {
        const task = await client.getTask({ tenant: '', id, historyLength: undefined });
        expect(task.history.flatMap(texts)).toContain('step 1 done');
      }
    }, 30_000);

    const answers: PushAnswer[] = [];
    let flooding = true;
    const flood = Array.from({ length: FLOOD_CONCURRENCY }, async () => {
      while (flooding) answers.push(await badPush(relay.url, `01${randomBytes(12).toString('hex').toUpperCase()}`));
    });
    try {
      await eventually(() => expect(answers.filter((answer) => answer.status === 429).length).toBeGreaterThan(50), 60_000, 50);
      const pushedBefore = upstream.pushes.length;
      upstream.openGate();
      await eventually(
        async () => {
          for (const id of taskIds) {
            const task = await client.getTask({ tenant: '', id, historyLength: undefined });
            expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
          }
        },
        60_000,
        100,
      );
      const during = upstream.pushes.slice(pushedBefore);
      // Each task pushed its last artifact chunk, its result and its completion during the flood: all taken.
      expect(during.length).toBeGreaterThanOrEqual(3 * taskIds.length);
      expect(during.filter((push) => push.status !== 200)).toEqual([]);
    } finally {
      flooding = false;
      await Promise.all(flood);
    }

    // The notifier was asked at most the budget's worth (and the first burst, in flight before any answer came back);
    // every other wrong token was refused before it, with a time to come back.
    expect(answers.filter((answer) => answer.status === 401).length).toBeLessThanOrEqual(FAILURES + FLOOD_CONCURRENCY);
    expect(answers.filter((answer) => answer.status !== 401 && answer.status !== 429)).toEqual([]);
    const throttled = answers.filter((answer) => answer.status === 429);
    expect(throttled.every((answer) => answer.reason === 'rate_limited' && Number(answer.retryAfter) > 0)).toBe(true);
  }, 180_000);
});
