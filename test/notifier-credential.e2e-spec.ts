import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, nkeyAuthenticator, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import request from 'supertest';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import {
  DIRECTORY_SUBJECTS,
  NOTIFIER_SUBJECTS,
  PUSH_CONFIG_SUBJECTS,
  TASKS_SUBJECTS,
  UPSTREAM_REPORT_SUBJECTS,
  type AgentRecord,
  type ParticipantRef,
  type TaskView,
} from '@app/contracts';
import { eventStreamName, natsInboxPrefix, NatsRpcClient, rateLimitStreamName } from '@app/messaging';
import { seedFile, writeNatsCredentials } from '../scripts/nats-credentials';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { issueTestCertificates, type TestCertificates } from './support/test-certificates';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';
import { WebhookSink } from './support/webhook-sink';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;
const SHIPPED_NATS_DIR = join(process.cwd(), 'docker', 'nats');

/** The subjects that carry a secret to the notifier, which anyone holding its credential may subscribe to (no queue group). */
const SECRET_CARRYING = [
  NOTIFIER_SUBJECTS.resolveUpstream,
  NOTIFIER_SUBJECTS.putUpstreamTls,
  NOTIFIER_SUBJECTS.provisionWebhookSecret,
  NOTIFIER_SUBJECTS.rotateWebhookSecret,
];

interface Answer {
  response?: Record<string, unknown>;
  err?: { reason?: string; message?: string };
}

/** A request as a plain nats.js client holding the notifier's credential speaks it (the relay's packet: an id and the data). */
async function call(connection: NatsConnection, subject: string, data: unknown): Promise<Answer> {
  const packet = JSON.stringify({ id: randomUUID(), pattern: subject, data });
  const reply = await connection.request(subject, packet, { timeout: 20000 });
  return reply.json<Answer>();
}

/** The server's refusal of a publish, as the client reports it (a request that was let through answers instead). */
async function refusal(connection: NatsConnection, subject: string, data: unknown): Promise<string> {
  return call(connection, subject, data).then(
    (answer) => `answered: ${JSON.stringify(answer)}`,
    (error: unknown) => String(error),
  );
}

/** How many messages the stream holds on `subject`. */
async function storedOn(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return Object.values(info.state.subjects ?? {}).reduce((sum, count) => sum + count, 0);
}

function ref(agent: AgentRecord): ParticipantRef {
  return { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role };
}

/**
 * Whoever steals the notifier's NATS credential (the service most exposed to hostile input: cards,
 * upstream answers, webhook responses) gets what the notifier's own subjects allow and no more. The
 * relay runs on the shipped NATS configuration with the credentials command's users; the thief is a
 * plain nats.js client with the notifier's seed.
 */
describe('a stolen notifier NATS credential', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let sink: WebhookSink;
  let upstream: UpstreamAgent;
  let certs: TestCertificates;
  let thief: NatsConnection;
  let edgeRpc: NatsRpcClient;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let echo: AgentRecord;
  const upstreamKey = `upstream-key-${randomUUID()}`;
  const overheard: Array<{ subject: string; data: string }> = [];
  const eavesdroppers: Subscription[] = [];

  const admin = () => request(relay.url);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-notifier-credential-'));
    copyFileSync(join(SHIPPED_NATS_DIR, 'nats.conf'), join(dir, 'nats.conf'));
    writeNatsCredentials({ dir, subjectPrefix: '', consumers: [], rotate: [], retire: false });
    expect(readFileSync(join(dir, 'permissions.conf'), 'utf8')).toBe(readFileSync(join(SHIPPED_NATS_DIR, 'permissions.conf'), 'utf8'));
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    sink = await WebhookSink.start();
    certs = issueTestCertificates();
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url, RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms' },
      envOf: (holder) => ({ NATS_NKEY_SEED_FILE: seedFile(dir, holder) }),
    });
    edgeRpc = relay.edge.get(NatsRpcClient);
    thief = await connect({
      servers: nats.url,
      authenticator: nkeyAuthenticator(() => new TextEncoder().encode(readFileSync(seedFile(dir, 'notifier'), 'utf8').trim())),
      inboxPrefix: natsInboxPrefix('notifier', ''),
      maxReconnectAttempts: 0,
      timeout: 60000,
    });
    // Listening in from the start, beside the notifier's queue group: every secret sent to it passes here.
    for (const subject of SECRET_CARRYING) {
      const subscription = thief.subscribe(subject, {
        callback: (_error: Error | null, message: Msg) => {
          overheard.push({ subject, data: message.string() });
        },
      });
      eavesdroppers.push(subscription);
    }
    await thief.flush();

    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', notification_webhook_url: sink.url('/bob') });
    upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', behaviour: 'wait', requireHeader: { name: 'X-Upstream-Key', value: upstreamKey } });
    const registered = await admin()
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle: uniqueHandle('echo', 'acme'), name: 'Echo', upstream: { card_url: upstream.cardUrl, auth: { scheme: 'api_key', secret: upstreamKey } } });
    expect(registered.status).toBe(201);
    echo = registered.body.agent as AgentRecord;
  });

  afterAll(async () => {
    await thief?.close();
    await relay?.stop();
    await upstream?.close();
    await nats?.stop();
    await sink?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('cannot create a handoff or speak as a sender: the tasks service’s send and transition are not its to publish', async () => {
    const created = await refusal(thief, TASKS_SUBJECTS.send, {
      caller: ref(alice.agent),
      recipient: ref(bob.agent),
      message: { parts: [{ kind: 'text', text: 'Wire the money.' }] },
    });
    expect(created).toMatch(/Permissions Violation for Publish to "relay.tasks.v1.send"/);
    const listed = await ok(relay.url, bob.api_key, 'tasks/list', {});
    expect(JSON.stringify(listed)).not.toContain('Wire the money.');

    const taskId = await createTask(relay.url, alice, { agent: echo } as RegisteredTestAgent, 'Summarise the incident.');
    expect(
      await refusal(thief, TASKS_SUBJECTS.send, { caller: ref(alice.agent), task_id: taskId, message: { parts: [{ kind: 'text', text: 'Ignore that.' }] } }),
    ).toMatch(/Permissions Violation for Publish to "relay.tasks.v1.send"/);
    expect(await refusal(thief, TASKS_SUBJECTS.transition, { caller_id: alice.agent.id, task_id: taskId, transition: 'cancel' })).toMatch(
      /Permissions Violation for Publish to "relay.tasks.v1.transition"/,
    );
    // Its own subjects name no caller and offer no sender's command.
    const asSender = await call(thief, UPSTREAM_REPORT_SUBJECTS.append, {
      task_id: taskId,
      caller: ref(alice.agent),
      message: { parts: [{ kind: 'text', text: 'Ignore that.' }] },
    });
    expect(asSender.err).toMatchObject({ reason: 'invalid_params' });
    const cancel = await call(thief, UPSTREAM_REPORT_SUBJECTS.transition, { task_id: taskId, transition: 'cancel' });
    expect(cancel.err).toMatchObject({ reason: 'invalid_params' });
    const seen = await ok(relay.url, alice.api_key, 'tasks/get', { task_id: taskId });
    expect(seen.status.state).not.toBe('cancelled');
    expect(JSON.stringify(seen)).not.toContain('Ignore that.');
  });

  it('reports only as the recipient of a handoff delivered to an upstream agent: not on another agent’s, not on one held for approval', async () => {
    // An ordinary agent's handoff: only bob's own calls change it.
    const toBob = await createTask(relay.url, alice, bob, 'Review the rota.');
    const accepted = await call(thief, UPSTREAM_REPORT_SUBJECTS.transition, { task_id: toBob, transition: 'accept' });
    expect(accepted.err).toMatchObject({ reason: 'not_a_participant' });
    const appended = await call(thief, UPSTREAM_REPORT_SUBJECTS.append, { task_id: toBob, message: { parts: [{ kind: 'text', text: 'Done, trust me.' }] } });
    expect(appended.err).toMatchObject({ reason: 'not_a_participant' });
    const bobSees = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: toBob });
    expect(bobSees.status.state).toBe('pending');
    expect(JSON.stringify(bobSees)).not.toContain('Done, trust me.');

    // A handoff to the upstream agent held for approval: nothing is reported on it, by either path.
    await admin()
      .put(`/admin/agents/${echo.handle}/trust`)
      .set('authorization', ADMIN)
      .send({ hold: [{ name: 'proposals', intents: ['propose_action'] }] })
      .expect(200);
    const held = await ok(relay.url, alice.api_key, 'message/send', {
      recipient: echo.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'Please drop the staging database.' }] },
      intent: 'propose_action',
      proposed_action: { description: 'drop the staging database', target_files: [], rationale: 'space' },
    });
    expect(held.status.state).toBe('held');
    const heldId = held.task_id as string;
    for (const transition of ['accept', 'decline', 'fail']) {
      const answer = await call(thief, UPSTREAM_REPORT_SUBJECTS.transition, { task_id: heldId, transition, reason: 'no' });
      expect(answer.err).toMatchObject({ reason: 'not_a_participant' });
    }
    const heldAppend = await call(thief, UPSTREAM_REPORT_SUBJECTS.append, { task_id: heldId, message: { parts: [{ kind: 'text', text: 'Approved.' }] } });
    expect(heldAppend.err).toMatchObject({ reason: 'not_a_participant' });
    // The sender's cancel of a held handoff is the edge's alone.
    expect(await refusal(thief, TASKS_SUBJECTS.transition, { caller_id: alice.agent.id, task_id: heldId, transition: 'cancel' })).toMatch(
      /Permissions Violation for Publish/,
    );
    const stillHeld = (await admin().get(`/admin/tasks/${heldId}`).set('authorization', ADMIN).expect(200)).body as { task: TaskView };
    expect(stillHeld.task.state).toBe('held');
    expect(upstream.tasksCreated.some((message) => JSON.stringify(message).includes('staging database'))).toBe(false);

    // What it still can: speak as the upstream agent on that agent's delivered handoff, as the agent's own server could.
    const delivered = await createTask(relay.url, alice, { agent: echo } as RegisteredTestAgent, 'Check the logs.');
    const reported = await call(thief, UPSTREAM_REPORT_SUBJECTS.append, {
      task_id: delivered,
      message: { parts: [{ kind: 'text', text: 'Logs are clean.' }] },
    });
    expect(reported.response).toMatchObject({ task_id: delivered });
    const aliceSees = await ok(relay.url, alice.api_key, 'tasks/get', { task_id: delivered });
    const reportedMessage = (aliceSees.messages as Array<{ body: string; from: string }>).find((message) => message.body === 'Logs are clean.');
    expect(reportedMessage).toMatchObject({ from: echo.handle });
  });

  it('applies an upstream answer whole or not at all, and only as the recipient of a handoff delivered to an upstream agent', async () => {
    const toBob = await createTask(relay.url, alice, bob, 'Plan the offsite.');
    const onBob = await call(thief, UPSTREAM_REPORT_SUBJECTS.apply, { task_id: toBob, steps: [{ kind: 'transition', transition: 'complete' }] });
    expect(onBob.err).toMatchObject({ reason: 'not_a_participant' });
    const asSender = await call(thief, UPSTREAM_REPORT_SUBJECTS.apply, { task_id: toBob, steps: [{ kind: 'transition', transition: 'cancel' }] });
    expect(asSender.err).toMatchObject({ reason: 'invalid_params' });
    expect((await ok(relay.url, bob.api_key, 'tasks/get', { task_id: toBob })).status.state).toBe('pending');

    // The upstream keeps its task working: the relay task waits, accepted, for what is reported.
    const delivered = await createTask(relay.url, alice, { agent: echo } as RegisteredTestAgent, 'Rotate the keys.');
    await eventually(async () => expect((await ok(relay.url, alice.api_key, 'tasks/get', { task_id: delivered })).status.state).toBe('accepted'), 30_000);
    const text = (value: string) => [{ kind: 'text', text: value }];
    // The second change is refused once the first is written (its message id is the sender's message's): the first is not kept either.
    const handedOff = await ok(relay.url, alice.api_key, 'tasks/get', { task_id: delivered });
    const sendersMessageId = (handedOff.messages as Array<{ id: string; from: string }>).find((message) => message.from === alice.agent.handle)?.id;
    expect(sendersMessageId).toEqual(expect.any(String));
    const half = await call(thief, UPSTREAM_REPORT_SUBJECTS.apply, {
      task_id: delivered,
      steps: [
        { kind: 'append', message: { message_id: `half-${delivered}`, parts: text('Half of the keys.') } },
        { kind: 'append', message: { message_id: sendersMessageId, parts: text('The other half.') } },
      ],
    });
    expect(half.err).toMatchObject({ reason: 'invalid_params' });
    expect(JSON.stringify(await ok(relay.url, alice.api_key, 'tasks/get', { task_id: delivered }))).not.toContain('Half of the keys.');

    const answer = {
      task_id: delivered,
      steps: [
        { kind: 'append', message: { message_id: `done-${delivered}`, parts: text('Keys rotated.') } },
        { kind: 'transition', transition: 'complete', result_summary: 'Rotated.' },
      ],
    };
    const whole = await call(thief, UPSTREAM_REPORT_SUBJECTS.apply, answer);
    expect(whole.response).toMatchObject({ task_id: delivered, state: 'completed', ended: false });
    // Made again (a notifier that stopped before it kept what it reported): nothing is made twice.
    const again = await call(thief, UPSTREAM_REPORT_SUBJECTS.apply, answer);
    expect(again.response).toMatchObject({ task_id: delivered, state: 'completed', ended: false });
    const seen = await ok(relay.url, alice.api_key, 'tasks/get', { task_id: delivered });
    expect(seen.status.state).toBe('completed');
    expect((seen.messages as Array<{ body: string; from: string }>).filter((message) => message.body === 'Keys rotated.')).toEqual([
      expect.objectContaining({ from: echo.handle }),
    ]);
  });

  it('reads no secret sent to the notifier: the upstream’s key, a client key, webhook secrets and push tokens travel sealed to its key', async () => {
    const tls = await admin()
      .put(`/admin/agents/${echo.handle}/upstream/tls`)
      .set('authorization', ADMIN)
      .send({ client_cert: certs.client.cert, client_key: certs.client.key });
    expect(tls.status).toBe(200);
    const rotated = (await admin().post(`/admin/agents/${bob.agent.handle}/webhook-secret`).set('authorization', ADMIN).expect(201)).body as {
      webhook_secret: string;
    };
    const carol = await registerAgent(relay, { handle: uniqueHandle('carol', 'acme'), name: 'Carol' });

    // A push config's token and credentials, as the notifier asks the tasks service for them.
    const pushToken = `push-token-${randomUUID()}`;
    const pushCredentials = `push-credentials-${randomUUID()}`;
    const taskId = await createTask(relay.url, alice, bob, 'With a push config.');
    const config = await edgeRpc.request(PUSH_CONFIG_SUBJECTS.set, {
      caller: ref(alice.agent),
      task_id: taskId,
      version: '1.0',
      config: { url: sink.url('/push'), token: pushToken, authentication: { schemes: ['Bearer'], credentials: pushCredentials } },
    });
    const target = await call(thief, PUSH_CONFIG_SUBJECTS.target, { task_id: taskId, owner: alice.agent.handle, config_id: config.id });
    expect(target.response).toMatchObject({ target: { url: sink.url('/push') } });

    await eventually(() => {
      for (const subject of SECRET_CARRYING) expect(overheard.some((entry) => entry.subject === subject)).toBe(true);
    }, 20000);
    const keyLine = certs.client.key.split('\n')[1];
    const secrets = [upstreamKey, keyLine, rotated.webhook_secret, carol.webhook_secret as string, bob.webhook_secret as string, pushToken, pushCredentials];
    const everything = [...overheard.map((entry) => entry.data), JSON.stringify(target)].join('\n');
    for (const secret of secrets) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/whsec_/);
    // What passed is sealed (a compact JWE to the notifier's key), not missing.
    const resolve = overheard.find((entry) => entry.subject === NOTIFIER_SUBJECTS.resolveUpstream);
    expect((JSON.parse(resolve?.data ?? '{}') as { data?: { sealed_credentials?: string } }).data?.sealed_credentials?.split('.')).toHaveLength(5);
  });

  it('cannot choose a new agent’s webhook secret by answering the directory first', async () => {
    const forged = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const forger = thief.subscribe(NOTIFIER_SUBJECTS.provisionWebhookSecret, {
      callback: (_error: Error | null, message: Msg) => {
        const { id } = message.json<{ id: string }>();
        message.respond(JSON.stringify({ id, response: { webhook_secret: forged, stored: true }, isDisposed: true }));
      },
    });
    await thief.flush();
    let dave: RegisteredTestAgent;
    try {
      dave = await registerAgent(relay, { handle: uniqueHandle('dave', 'acme'), name: 'Dave', notification_webhook_url: sink.url('/dave') });
    } finally {
      forger.unsubscribe();
    }
    expect(dave.webhook_secret).not.toBe(forged);
    // The secret shown is the one the notifier signs with.
    await createTask(relay.url, alice, dave, 'Signed for Dave.');
    await eventually(() => expect(sink.to('/dave').length).toBeGreaterThan(0), 30000);
    expect(verifyStandardWebhook(sink.to('/dave')[0], dave.webhook_secret as string)).toBe(true);
    expect(verifyStandardWebhook(sink.to('/dave')[0], forged)).toBe(false);
  });

  it('cannot re-point an upstream agent: the directory takes a refreshed profile from it, never a new interface', async () => {
    const before = (await call(thief, DIRECTORY_SUBJECTS.getAgent, { handle: echo.handle })).response as unknown as AgentRecord;
    expect(before.upstream?.url).toBe(upstream.url);
    const elsewhere = { ...before.upstream, url: sink.url('/attacker/a2a'), card_fetched_at: new Date().toISOString() };
    const moved = await call(thief, DIRECTORY_SUBJECTS.putUpstream, { handle: echo.handle, upstream: elsewhere });
    expect(moved.err).toMatchObject({ reason: 'invalid_params' });
    expect(moved.err?.message).toMatch(/may not change url/);
    for (const change of [{ auth_scheme: 'none', auth_header: null }, { card_url: sink.url('/attacker/card') }, { binding: 'HTTP+JSON' }]) {
      const answer = await call(thief, DIRECTORY_SUBJECTS.putUpstream, { handle: echo.handle, upstream: { ...before.upstream, ...change } });
      expect(answer.err).toMatchObject({ reason: 'invalid_params' });
    }
    // The operator's acceptance is the edge's subject alone.
    expect(await refusal(thief, DIRECTORY_SUBJECTS.acceptUpstream, { handle: echo.handle, upstream: elsewhere })).toMatch(
      /Permissions Violation for Publish to "relay.directory.v1.agents.upstream.accept"/,
    );
    const after = (await admin().get(`/admin/agents/${echo.handle}`).set('authorization', ADMIN).expect(200)).body as AgentRecord;
    expect(after.upstream).toEqual(before.upstream);

    // A harmless refresh still applies: a new description, the card read again.
    const refreshedAt = new Date().toISOString();
    const refreshed = await call(thief, DIRECTORY_SUBJECTS.putUpstream, {
      handle: echo.handle,
      upstream: { ...before.upstream, card_fetched_at: refreshedAt },
      description: 'Echoes.',
    });
    expect(refreshed.response).toMatchObject({ description: 'Echoes.', upstream: { url: upstream.url, card_fetched_at: refreshedAt } });
  });
  it.each([
    ['without a registration of the notifier', undefined],
    ['with a registration id of its own making', randomUUID()],
  ])('cannot send an upstream’s key elsewhere by answering its registration first (%s): nothing is registered', async (_case, forgedRegistration) => {
    const impostor = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    const key = `upstream-key-${randomUUID()}`;
    const real = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', requireHeader: { name: 'X-Upstream-Key', value: key } });
    let forgedAnswers = 0;
    const forger = thief.subscribe(NOTIFIER_SUBJECTS.resolveUpstream, {
      callback: (_error: Error | null, message: Msg) => {
        const { id } = message.json<{ id: string }>();
        const upstream = {
          card_url: real.cardUrl,
          url: impostor.url,
          binding: 'JSONRPC',
          protocol_version: '1.0',
          streaming: false,
          push_notifications: false,
          auth_scheme: 'api_key',
          auth_header: 'X-Upstream-Key',
          card_fetched_at: new Date().toISOString(),
        };
        const response = {
          upstream,
          card: { name: 'Echo', description: null, skills: [] },
          ...(forgedRegistration ? { registration: forgedRegistration } : {}),
        };
        forgedAnswers += 1;
        message.respond(JSON.stringify({ id, response, isDisposed: true }));
      },
    });
    await thief.flush();
    const handle = uniqueHandle('echo2', 'acme');
    let registered: request.Response;
    try {
      registered = await admin()
        .post('/admin/agents')
        .set('authorization', ADMIN)
        .send({ handle, name: 'Echo', upstream: { card_url: real.cardUrl, auth: { scheme: 'api_key', secret: key } } });
    } finally {
      forger.unsubscribe();
    }
    try {
      expect(forgedAnswers).toBe(1);
      // Whichever answer the edge took, the directory holds an upstream interface only with the
      // notifier's own registration of it: a forged one is refused and nothing is created.
      if (registered.status === 201) {
        expect((registered.body.agent as AgentRecord).upstream?.url).toBe(real.url);
      } else {
        expect(registered.status).toBeGreaterThanOrEqual(400);
        await admin().get(`/admin/agents/${handle}`).set('authorization', ADMIN).expect(404);
      }
      expect(JSON.stringify(impostor.calls)).not.toContain(key);
      expect(impostor.tasksCreated).toEqual([]);
    } finally {
      await impostor.close();
      await real.close();
    }
  });

  it('cannot aim a service’s answer anywhere but an inbox: requests whose reply names an event subject, a rate-limit key or a request subject are dropped', async () => {
    const edge = await connect({
      servers: nats.url,
      authenticator: nkeyAuthenticator(() => new TextEncoder().encode(readFileSync(seedFile(dir, 'edge'), 'utf8').trim())),
      inboxPrefix: natsInboxPrefix('edge', ''),
      maxReconnectAttempts: 0,
      timeout: 60000,
    });
    const directory = await connect({
      servers: nats.url,
      authenticator: nkeyAuthenticator(() => new TextEncoder().encode(readFileSync(seedFile(dir, 'directory'), 'utf8').trim())),
      inboxPrefix: natsInboxPrefix('directory', ''),
      maxReconnectAttempts: 0,
      timeout: 60000,
    });
    try {
      const onRequestSubject: Msg[] = [];
      directory.subscribe(DIRECTORY_SUBJECTS.createKey, { callback: (_error, message) => void onRequestSubject.push(message) });
      await directory.flush();
      const forgedEvent = `relay.events.task.forged_${randomUUID().replace(/-/g, '')}`;
      const forgedLease = `relay.ratelimit.forged_${randomUUID().replace(/-/g, '')}.1`;
      const delivered = await createTask(relay.url, alice, { agent: echo } as RegisteredTestAgent, 'Answer me somewhere else.');
      const asked: Array<[string, unknown]> = [
        [UPSTREAM_REPORT_SUBJECTS.append, { task_id: delivered, message: { parts: [{ kind: 'text', text: 'Stored where?' }] } }],
        [PUSH_CONFIG_SUBJECTS.target, { task_id: delivered }],
        [DIRECTORY_SUBJECTS.getAgent, { handle: alice.agent.handle }],
      ];
      for (const reply of [forgedEvent, forgedLease, DIRECTORY_SUBJECTS.createKey]) {
        for (const [subject, data] of asked) thief.publish(subject, JSON.stringify({ id: randomUUID(), pattern: subject, data }), { reply });
      }
      await thief.flush();
      // Control: the same requests on the notifier's own inbox are answered, so the services read every forged one before.
      for (const [subject, data] of asked) expect(await call(thief, subject, data)).toBeDefined();
      expect(await storedOn(await jetstreamManager(thief), eventStreamName(''), forgedEvent)).toBe(0);
      expect(await storedOn(await jetstreamManager(edge), rateLimitStreamName(''), forgedLease)).toBe(0);
      expect(onRequestSubject).toEqual([]);
    } finally {
      await edge.close();
      await directory.close();
    }
  });
});
