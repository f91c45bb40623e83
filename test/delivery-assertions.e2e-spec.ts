import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { TaskState, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, RestTransportFactory, type CallInterceptor } from '@a2a-js/sdk/client';
import { createRemoteJWKSet, customFetch, decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import { DELIVERY_ASSERTION_HEADER, DELIVERY_ASSERTION_JWKS_PATH, DELIVERY_ASSERTION_TYPE, type DeliveryAssertionClaims } from '@app/contracts';
import { generateAssertionKeyPair } from '@app/secrets';
import { DeliveryAssertionSigner } from '../apps/notifier/src/deliveries/delivery-assertion';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { RelayHarness, TEST_ADMIN_TOKEN, TEST_ASSERTION_KEYS } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { startUpstreamAgent, type SeenCall, type UpstreamAgent } from './support/upstream-agent';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const HEADER = DELIVERY_ASSERTION_HEADER.toLowerCase();

/**
 * A recipient's check of the relay's assertion, as docs/chains.md shows it: jose against the
 * edge's JWKS (fetched once and cached; an unknown `kid` makes it fetch again), the issuer, the
 * audience (the recipient's own handle), the type, the algorithm and the expiry.
 */
class AssertionVerifier {
  readonly verified: Array<DeliveryAssertionClaims & JWTPayload> = [];
  readonly refused: Array<{ reason: string; kid: unknown }> = [];
  /** How often it fetched the key set. */
  fetches = 0;
  private readonly jwks: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly relayUrl: string) {
    // The steps of a rotation are minutes apart (docs/operations.md#delivery-assertion-keys); here
    // seconds, so the verifier may fetch the set again as soon as it meets a key it does not know.
    this.jwks = createRemoteJWKSet(new URL(DELIVERY_ASSERTION_JWKS_PATH, relayUrl), {
      cooldownDuration: 0,
      [customFetch]: (url: string, options: RequestInit) => {
        this.fetches += 1;
        return fetch(url, options);
      },
    });
  }

  async verify(token: string | undefined, audience: string): Promise<(DeliveryAssertionClaims & JWTPayload) | null> {
    if (!token) {
      this.refused.push({ reason: 'missing', kid: undefined });
      return null;
    }
    try {
      const { payload } = await jwtVerify<DeliveryAssertionClaims>(token, this.jwks, {
        issuer: this.relayUrl,
        audience,
        typ: DELIVERY_ASSERTION_TYPE,
        algorithms: ['ES256'],
      });
      this.verified.push(payload);
      return payload;
    } catch (error) {
      this.refused.push({ reason: (error as errors.JOSEError).code ?? String(error), kid: safeKid(token) });
      return null;
    }
  }
}

function safeKid(token: string): unknown {
  try {
    return decodeProtectedHeader(token).kid;
  } catch {
    return undefined;
  }
}

function headerOf(headers: SeenCall['headers'] | SinkRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** An upstream's rule: a message send or a cancel (HTTP+JSON paths) must carry a valid assertion for it; reads of its own tasks need none. */
function isDelivery(call: SeenCall): boolean {
  return call.method === 'POST' && /\/message:(send|stream)$|:cancel$/.test(call.path);
}

function headersInterceptor(headers: Record<string, string>): CallInterceptor {
  return {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...headers } };
    },
    async after() {},
  };
}

describe('Who asked, signed: the assertion every delivery carries, verified by its recipients with jose', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let sink: WebhookSink;
  let carol: RegisteredTestAgent;
  let planner: UpstreamAgent;
  let plannerHandle: string;
  let plannerVerifier: AssertionVerifier;
  const org = `sign${randomUUID().slice(0, 6)}`;

  /** Alice asks Bob (the chain's root); Bob hands part of it on, naming Alice's handoff. */
  async function rootTask(): Promise<Task> {
    const client = await senderClient(relay, alice, bob.agent.handle);
    return (await client.sendMessage({
      tenant: '',
      message: userMessage('check the release'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
  }

  async function handToPlanner(parent: Task, text: string): Promise<Task> {
    const client = await senderClient(relay, bob, plannerHandle);
    const message: Message = { ...userMessage(text), referenceTaskIds: [parent.id] };
    const sent = (await client.sendMessage({
      tenant: '',
      message,
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
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

  beforeAll(async () => {
    // The notifier signs with the edge's URL as issuer: it starts once the edge listens.
    relay = await RelayHarness.start({
      services: ['directory', 'tasks'],
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: '1000',
      },
    });
    await relay.startService('notifier', { RELAY_PUBLIC_URL: relay.url });
    sink = await WebhookSink.start();
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol', notification_webhook_url: sink.url('/carol') });
    plannerHandle = uniqueHandle('planner', org);
    plannerVerifier = new AssertionVerifier(relay.url);
    planner = await startUpstreamAgent({
      binding: 'HTTP+JSON',
      card: '1.0',
      verifyRequest: async (call) => !isDelivery(call) || (await plannerVerifier.verify(headerOf(call.headers, HEADER), plannerHandle)) !== null,
    });
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ handle: plannerHandle, name: 'Planner', upstream: { card_url: planner.cardUrl } });
    expect(registered.status).toBe(201);
  });

  afterAll(async () => {
    await planner?.close();
    await sink?.stop();
    await relay?.stop();
  });

  it('serves the published keys at /.well-known/jwks.json, public, cacheable, without private parts', async () => {
    const response = await request(relay.url).get(DELIVERY_ASSERTION_JWKS_PATH).expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/jwk-set\+json/);
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    const { keys } = JSON.parse(response.text) as { keys: Json[] };
    expect(keys).toEqual([{ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: 'test', alg: 'ES256', use: 'sig' }]);
    expect(response.text).not.toContain(TEST_ASSERTION_KEYS.signingKey.split(':')[1]);
  });

  it("an upstream agent (the official SDK's server) verifies who asked on whose behalf before it takes the handoff", async () => {
    const root = await rootTask();
    const task = await handToPlanner(root, 'draft the release notes');

    expect(planner.tasksCreated).toHaveLength(1);
    const sendCalls = planner.calls.filter(isDelivery);
    expect(sendCalls).toHaveLength(1);
    const claims = plannerVerifier.verified.find((payload) => payload.task_id === task.id);
    expect(claims).toMatchObject({
      iss: relay.url,
      aud: plannerHandle,
      sub: bob.agent.handle,
      root_sender: alice.agent.handle,
      root_task_id: root.id,
      parent_task_id: root.id,
      depth: 1,
      event: 'a2a.task.created',
    });
    expect((claims?.exp as number) - (claims?.iat as number)).toBe(300);
    expect(plannerVerifier.refused).toEqual([]);
    // The unsigned sender header says the same; only the assertion proves it.
    expect(headerOf(sendCalls[0].headers, 'x-agentrelay-sender')).toBe(bob.agent.handle);
  });

  it("the upstream refuses a forged assertion, another recipient's, an expired one, and none at all: nothing is made", async () => {
    const root = await rootTask();
    // A genuine assertion the relay signed, for another audience: Carol's webhook of a handoff to her.
    await handToCarol(root, 'for carol');
    const carolsHook = await eventually(() => {
      const hook = sink.to('/carol').find((entry) => headerOf(entry.headers, HEADER));
      expect(hook).toBeDefined();
      return hook as SinkRequest;
    }, 20_000);
    const carolsAssertion = headerOf(carolsHook.headers, HEADER) as string;
    expect(decodeJwt(carolsAssertion).aud).toBe(carol.agent.handle);

    const genuine = decodeJwt(carolsAssertion) as unknown as DeliveryAssertionClaims;
    const facts = {
      sender: bob.agent.handle,
      root_sender: alice.agent.handle,
      root_task_id: root.id,
      parent_task_id: root.id,
      depth: 1,
    };
    const forFacts = { task_id: genuine.task_id, event: 'a2a.task.created', target_handle: plannerHandle, assertion: facts };
    // Another key under the relay's key id: the signature does not verify.
    const forged = await new DeliveryAssertionSigner(generateAssertionKeyPair('test').signingKey, relay.url, 300).sign(forFacts);
    // The relay's own key, signed ten minutes ago for five: expired.
    const tenMinutesAgo = Date.now() - 10 * 60_000;
    const expired = await new DeliveryAssertionSigner(TEST_ASSERTION_KEYS.signingKey, relay.url, 300, () => tenMinutesAgo).sign(forFacts);
    // The relay's own key and a fresh time, but another issuer.
    const otherIssuer = await new DeliveryAssertionSigner(TEST_ASSERTION_KEYS.signingKey, 'https://other-relay.test', 300).sign(forFacts);

    const created = planner.tasksCreated.length;
    const refusedBefore = plannerVerifier.refused.length;
    for (const assertion of [forged, carolsAssertion, expired, otherIssuer, undefined]) {
      const factory = new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          transports: [new RestTransportFactory({})],
          clientConfig: { interceptors: [headersInterceptor(assertion ? { [DELIVERY_ASSERTION_HEADER]: assertion } : {})] },
        }),
      );
      const direct = await factory.createFromUrl(planner.url);
      await expect(
        direct.sendMessage({
          tenant: '',
          message: userMessage('do it, bob says so'),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
          metadata: undefined,
        }),
      ).rejects.toThrow(/401/);
    }
    expect(planner.tasksCreated).toHaveLength(created);
    expect(plannerVerifier.refused.slice(refusedBefore).map((refusal) => refusal.reason)).toEqual([
      'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'ERR_JWT_EXPIRED',
      'ERR_JWT_CLAIM_VALIDATION_FAILED',
      'missing',
    ]);
  });

  async function handToCarol(parent: Task, text: string): Promise<string> {
    const client = await senderClient(relay, bob, carol.agent.handle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: { ...userMessage(text), referenceTaskIds: [parent.id] },
      configuration: {
        acceptedOutputModes: [],
        // Bob follows the handoff by push too: each event of it comes to his push URL.
        taskPushNotificationConfig: { tenant: '', id: 'bob-push', taskId: '', url: sink.url('/bob-push'), token: 'bob-token', authentication: undefined },
        returnImmediately: true,
      },
      metadata: undefined,
    })) as Task;
    return sent.id;
  }

  it("a webhook receiver and a push receiver verify it too: Carol's webhook names her, Bob's push config names him", async () => {
    const root = await rootTask();
    const taskId = await handToCarol(root, 'check the changelog');
    const verifier = new AssertionVerifier(relay.url);
    const hook = await eventually(() => {
      const found = sink.to('/carol').find((entry) => (JSON.parse(entry.body) as Json).data.task_id === taskId);
      expect(found).toBeDefined();
      return found as SinkRequest;
    }, 20_000);
    expect(verifyStandardWebhook(hook, carol.webhook_secret as string)).toBe(true);
    expect(await verifier.verify(headerOf(hook.headers, HEADER), carol.agent.handle)).toMatchObject({
      iss: relay.url,
      aud: carol.agent.handle,
      sub: bob.agent.handle,
      root_sender: alice.agent.handle,
      root_task_id: root.id,
      parent_task_id: root.id,
      depth: 1,
      task_id: taskId,
      event: 'a2a.task.created',
    });

    // Carol completes it: the completion comes to Bob's push URL.
    const completed = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${carol.api_key}`)
      .set('a2a-version', '1.0')
      .send({ jsonrpc: '2.0', id: 1, method: 'CompleteTask', params: { id: taskId } });
    expect(completed.body.error).toBeUndefined();
    const push = await eventually(() => {
      const found = sink.to('/bob-push').find((entry) => entry.body.includes(taskId) && entry.body.includes('TASK_STATE_COMPLETED'));
      expect(found).toBeDefined();
      return found as SinkRequest;
    }, 20_000);
    expect(headerOf(push.headers, 'x-a2a-notification-token')).toBe('bob-token');
    expect(await verifier.verify(headerOf(push.headers, HEADER), bob.agent.handle)).toMatchObject({
      aud: bob.agent.handle,
      sub: bob.agent.handle,
      root_sender: alice.agent.handle,
      depth: 1,
      task_id: taskId,
      event: 'a2a.task.completed',
    });
    // Bob's assertion is no good to Carol.
    expect(await verifier.verify(headerOf(push.headers, HEADER), carol.agent.handle)).toBeNull();
    expect(verifier.refused.map((refusal) => refusal.reason)).toEqual(['ERR_JWT_CLAIM_VALIDATION_FAILED']);
  });

  it("the sender's later message and its cancel are deliveries too: each carries an assertion for the upstream", async () => {
    const quizVerifier = new AssertionVerifier(relay.url);
    const quizHandle = uniqueHandle('quiz', org);
    const quiz = await startUpstreamAgent({
      binding: 'HTTP+JSON',
      card: '1.0',
      behaviour: 'ask',
      verifyRequest: async (call) => !isDelivery(call) || (await quizVerifier.verify(headerOf(call.headers, HEADER), quizHandle)) !== null,
    });
    try {
      const registered = await request(relay.url)
        .post('/admin/agents')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ handle: quizHandle, name: 'Quiz', upstream: { card_url: quiz.cardUrl } });
      expect(registered.status).toBe(201);
      const client = await senderClient(relay, alice, quizHandle);
      const configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
      const asked = (await client.sendMessage({ tenant: '', message: userMessage('paint the shed'), configuration, metadata: undefined })) as Task;
      await eventually(async () => {
        expect((await client.getTask({ tenant: '', id: asked.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      }, 20_000);
      await client.sendMessage({
        tenant: '',
        message: { ...userMessage('blue'), taskId: asked.id, contextId: asked.contextId },
        configuration,
        metadata: undefined,
      });
      await eventually(async () => {
        expect((await client.getTask({ tenant: '', id: asked.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      }, 20_000);

      // Another handoff, canceled while the upstream asks its question.
      const canceled = (await client.sendMessage({ tenant: '', message: userMessage('paint the fence'), configuration, metadata: undefined })) as Task;
      await eventually(async () => {
        expect((await client.getTask({ tenant: '', id: canceled.id, historyLength: undefined })).status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
      }, 20_000);
      await client.cancelTask({ tenant: '', id: canceled.id, metadata: undefined });
      await eventually(() => expect(quizVerifier.verified.filter((claims) => claims.task_id === canceled.id)).toHaveLength(2), 20_000);

      const events = (taskId: string) => quizVerifier.verified.filter((claims) => claims.task_id === taskId).map((claims) => claims.event);
      expect(events(asked.id)).toEqual(['a2a.task.created', 'a2a.task.message']);
      expect(events(canceled.id)).toEqual(['a2a.task.created', 'a2a.task.canceled']);
      expect(quizVerifier.verified.every((claims) => claims.aud === quizHandle && claims.sub === alice.agent.handle && claims.depth === 0)).toBe(true);
      expect(quizVerifier.refused).toEqual([]);
    } finally {
      await quiz.close();
    }
  });

  it("names the root's sender two hops down: Alice → Bob → Carol → the planner", async () => {
    const root = await rootTask();
    const carols = await handToCarol(root, 'ask the planner');
    const client = await senderClient(relay, carol, plannerHandle);
    const sent = (await client.sendMessage({
      tenant: '',
      message: { ...userMessage('plan it'), referenceTaskIds: [carols] },
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    const claims = await eventually(() => {
      const found = plannerVerifier.verified.find((payload) => payload.task_id === sent.id);
      expect(found).toBeDefined();
      return found as DeliveryAssertionClaims;
    }, 20_000);
    expect(claims).toMatchObject({ sub: carol.agent.handle, root_sender: alice.agent.handle, root_task_id: root.id, parent_task_id: carols, depth: 2 });
  });

  it('signs every attempt anew: a retried webhook carries a fresh assertion', async () => {
    sink.plan('/carol-retry', [{ status: 503 }, { status: 200 }]);
    const dave = await registerAgent(relay, { handle: uniqueHandle('dave', org), name: 'Dave', notification_webhook_url: sink.url('/carol-retry') });
    const client = await senderClient(relay, alice, dave.agent.handle);
    await client.sendMessage({
      tenant: '',
      message: userMessage('again'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    });
    const [first, second] = await eventually(() => {
      const attempts = sink.to('/carol-retry');
      expect(attempts.map((attempt) => attempt.status)).toEqual([503, 200]);
      return attempts;
    }, 20_000);
    const [a, b] = [decodeJwt(headerOf(first.headers, HEADER) as string), decodeJwt(headerOf(second.headers, HEADER) as string)];
    expect(a.jti).not.toBe(b.jti);
    expect(b.exp as number).toBeGreaterThanOrEqual(a.exp as number);
    expect(headerOf(first.headers, 'webhook-id')).toBe(headerOf(second.headers, 'webhook-id'));
    const verifier = new AssertionVerifier(relay.url);
    expect(await verifier.verify(headerOf(second.headers, HEADER), dave.agent.handle)).toMatchObject({
      sub: alice.agent.handle,
      depth: 0,
      root_sender: alice.agent.handle,
    });
  });

  it('rotates without downtime: publish the next key, sign with it, drop the last; a verifier with a cached key set verifies throughout', async () => {
    const next = generateAssertionKeyPair('next');
    const root = await rootTask();
    const [refusedBefore, deliveriesBefore, createdBefore] = [
      plannerVerifier.refused.length,
      planner.calls.filter(isDelivery).length,
      planner.tasksCreated.length,
    ];
    // It fetched the set once, at its first assertion, and verified every one since from its cache.
    expect(plannerVerifier.fetches).toBe(1);
    const deliveredWith = async (text: string): Promise<string> => {
      const task = await handToPlanner(root, text);
      const claims = plannerVerifier.verified.find((payload) => payload.task_id === task.id);
      expect(claims).toBeDefined();
      const call = planner.calls.filter(isDelivery).at(-1) as SeenCall;
      return decodeProtectedHeader(headerOf(call.headers, HEADER) as string).kid as string;
    };
    expect(await deliveredWith('before the rotation')).toBe('test');

    // 1. The edge publishes the next key beside the current one; the notifier still signs with the current one.
    await relay.restartEdge({ RELAY_ASSERTION_PUBLIC_KEYS: `${TEST_ASSERTION_KEYS.publicKey},${next.publicKey}` });
    const published = await request(relay.url).get(DELIVERY_ASSERTION_JWKS_PATH).expect(200);
    expect((JSON.parse(published.text) as { keys: Json[] }).keys.map((key) => key.kid)).toEqual(['test', 'next']);
    expect(await deliveredWith('while the next key is published')).toBe('test');

    // 2. The notifier signs with the next key: the verifier, which has not seen it, fetches the set again.
    await relay.stopService('notifier');
    await relay.startService('notifier', { RELAY_PUBLIC_URL: relay.url, RELAY_ASSERTION_SIGNING_KEY: next.signingKey });
    expect(await deliveredWith('signed with the next key')).toBe('next');
    expect(plannerVerifier.fetches).toBe(2);

    // 3. The last key is dropped from the set: deliveries go on; what the last key signs is refused from now on.
    await relay.restartEdge({ RELAY_ASSERTION_PUBLIC_KEYS: next.publicKey });
    expect(await deliveredWith('after the last key is dropped')).toBe('next');
    expect(plannerVerifier.fetches).toBe(2);
    // No relay delivery was refused or repeated on the way: each of the four handoffs made one upstream task.
    expect(plannerVerifier.refused.slice(refusedBefore)).toEqual([]);
    expect(planner.calls.filter(isDelivery).length - deliveriesBefore).toBe(4);
    expect(planner.tasksCreated.length - createdBefore).toBe(4);

    const lateVerifier = new AssertionVerifier(relay.url);
    const signedWithTheLastKey = await new DeliveryAssertionSigner(TEST_ASSERTION_KEYS.signingKey, relay.url, 300).sign({
      task_id: root.id,
      event: 'a2a.task.created',
      target_handle: plannerHandle,
      assertion: { sender: bob.agent.handle, root_sender: alice.agent.handle, root_task_id: root.id, parent_task_id: null, depth: 0 },
    });
    expect(await lateVerifier.verify(signedWithTheLastKey, plannerHandle)).toBeNull();
    expect(lateVerifier.refused.map((refusal) => refusal.reason)).toEqual(['ERR_JWKS_NO_MATCHING_KEY']);
  });
});
