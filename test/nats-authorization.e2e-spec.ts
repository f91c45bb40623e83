import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, credsAuthenticator, errors, nkeyAuthenticator, nkeys, type NatsConnection, type PermissionViolationError } from '@nats-io/transport-node';
import request from 'supertest';
import { DIRECTORY_SUBJECTS, EVENT_CONSUMER_SUBJECTS, eventConsumerEnsureSubject, TASKS_SUBJECTS, type TaskEvent } from '@app/contracts';
import {
  consoleSessionStreamName,
  EVENT_CONSUMER_JS_API_PREFIX,
  eventConsumerPermissions,
  eventStreamName,
  keyFilterBucketName,
  natsInboxPrefix,
  NatsPermissionError,
  permissionsBlock,
  relayNatsPermissions,
  rateLimitStreamName,
} from '@app/messaging';
import { credsFile, seedFile, writeNatsCredentials, writeOperatorCredentials } from '../scripts/nats-credentials';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness, TEST_ADMIN_TOKEN, type ServiceName } from './support/relay-harness';
import { openSse } from './support/sse';
import { createTask } from './support/tasks';
import { WebhookSink } from './support/webhook-sink';

const SHIPPED_NATS_DIR = join(process.cwd(), 'docker', 'nats');
const CONSUMER = 'audit';

/**
 * The shipped NATS configuration (docker/nats: nats.conf and the permissions generated from the
 * relay's table), with users made by the credentials command, on a private nats-server.
 */
async function startShippedNats(dir: string, consumers: string[]): Promise<PrivateNatsServer> {
  copyFileSync(join(SHIPPED_NATS_DIR, 'nats.conf'), join(dir, 'nats.conf'));
  writeNatsCredentials({ dir, subjectPrefix: '', consumers, rotate: [], retire: false });
  // The shipped table is the one the command writes for the default prefix: nothing has drifted.
  const shipped = readFileSync(join(SHIPPED_NATS_DIR, 'permissions.conf'), 'utf8');
  expect(readFileSync(join(dir, 'permissions.conf'), 'utf8')).toBe(shipped);
  const authorization = readFileSync(join(dir, 'credentials', 'auth.conf'), 'utf8');
  expect(authorization).toContain(shipped.trimEnd());
  return PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
}

function seedEnv(dir: string, holder: string): Record<string, string> {
  return { NATS_NKEY_SEED_FILE: seedFile(dir, holder) };
}

async function connectWithSeed(url: string, seedPath: string, inboxPrefix: string): Promise<NatsConnection> {
  return connect({
    servers: url,
    authenticator: nkeyAuthenticator(() => new TextEncoder().encode(readFileSync(seedPath, 'utf8').trim())),
    inboxPrefix,
    maxReconnectAttempts: 0,
    // Generous: the server answers at once, but the machine may be loaded.
    timeout: 60000,
  });
}

/** What the server said of one operation of `connection`: the permission violation it reported, if any. */
function violations(connection: NatsConnection): PermissionViolationError[] {
  const seen: PermissionViolationError[] = [];
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === 'error' && status.error instanceof errors.PermissionViolationError) seen.push(status.error);
    }
  })();
  return seen;
}

/** The notifier's `ensure` for one event consumer, as a plain nats.js client speaks it (the relay's packet: an id and the data). */
async function ensureConsumer(connection: NatsConnection, name: string, data: Record<string, unknown>): Promise<Record<string, unknown>> {
  const packet = JSON.stringify({ id: randomUUID(), pattern: EVENT_CONSUMER_SUBJECTS.ensure, data });
  const reply = await connection.request(eventConsumerEnsureSubject(name), packet, { timeout: 10000 });
  return reply.json<Record<string, unknown>>();
}

describe('NATS as a trust boundary: the relay on least-privilege credentials', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let sink: WebhookSink;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-nats-auth-'));
    nats = await startShippedNats(dir, [CONSUMER]);
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url, RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms' },
      envOf: (holder) => seedEnv(dir, holder),
    });
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob', notification_webhook_url: sink.url('/bob') });
  });

  afterAll(async () => {
    await relay?.stop();
    await nats?.stop();
    await sink?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs a handoff end to end: send, a stream, the recipient’s webhook, completion and the console', async () => {
    const stream = await openSse(
      `${relay.url}/a2a/${bob.agent.handle}`,
      { 'x-api-key': alice.api_key, 'a2a-version': '1.0' },
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendStreamingMessage',
        params: { message: { messageId: 'm-auth-1', role: 'ROLE_USER', parts: [{ text: 'Rotate the staging keys.' }] } },
      },
    );
    const first = await stream.next();
    const taskId = first?.data.result.task.id as string;
    expect(first?.data.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
    await ok(relay.url, bob.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, bob.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Rotated.' });
    const states = (await stream.rest()).map((event) => event.data.result.statusUpdate?.status.state ?? event.data.result.task?.status.state);
    expect(states).toContain('TASK_STATE_COMPLETED');
    const seen = await ok(relay.url, alice.api_key, 'tasks/get', { task_id: taskId });
    expect(seen.status.state).toBe('completed');
    await eventually(() => sink.to('/bob').length > 0, 30000);
    const signIn = await request(relay.url).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201);
    const cookie = /relay_session=([^;]+)/.exec(String(signIn.headers['set-cookie']))?.[1];
    await request(relay.url).get(`/admin/tasks/${taskId}`).set('cookie', `relay_session=${cookie}`).expect(200);
  });

  it('gives an event consumer the task events through its own durable consumer, and nothing else', async () => {
    const taskId = await createTask(relay.url, alice, bob, 'For the audit trail.');
    const permissions = eventConsumerPermissions(CONSUMER, '');
    const consumer = await connectWithSeed(nats.url, seedFile(dir, `consumer-${CONSUMER}`), permissions.inboxPrefix);
    const refused = violations(consumer);
    try {
      // Its account has no JetStream of its own; the relay's API is imported under a prefix of its own.
      const jsm = await jetstreamManager(consumer, { checkAPI: false });
      const relayJsm = await jetstreamManager(consumer, { apiPrefix: EVENT_CONSUMER_JS_API_PREFIX, checkAPI: false });
      // It cannot make a consumer itself (a push consumer could deliver the stream onto any subject)…
      await expect(
        jsm.consumers.add(eventStreamName(''), { durable_name: CONSUMER, ack_policy: AckPolicy.Explicit, deliver_subject: DIRECTORY_SUBJECTS.createKey }),
      ).rejects.toThrow(/Permissions Violation/);
      // …it asks the notifier, on the subject of its own name, for a durable pull consumer.
      const ensured = await ensureConsumer(consumer, CONSUMER, { start: 'all', filter_subject: 'task.>' });
      expect(ensured).toMatchObject({ response: { name: CONSUMER, stream: eventStreamName(''), created: true } });
      expect(await ensureConsumer(consumer, 'someone_else', { start: 'all' }).catch((error: unknown) => String(error))).toMatch(/Permissions Violation/);
      const events = await jetstream(consumer, { apiPrefix: EVENT_CONSUMER_JS_API_PREFIX }).consumers.get(eventStreamName(''), CONSUMER);
      const read: TaskEvent[] = [];
      await eventually(async () => {
        const batch = await events.fetch({ max_messages: 100, expires: 1000 });
        for await (const message of batch) {
          read.push(message.json<TaskEvent>());
          message.ack();
        }
        return read.some((event) => event.task_id === taskId);
      }, 30000);

      const requestRefusal = async (subject: string, body: unknown): Promise<string> =>
        consumer.request(subject, JSON.stringify(body), { timeout: 5000 }).then(
          () => 'answered',
          (error: unknown) => String(error instanceof Error ? error.message : error),
        );
      expect(await requestRefusal(DIRECTORY_SUBJECTS.createKey, { data: { handle: bob.agent.handle } })).toMatch(
        /Permissions Violation for Publish to "relay.directory.v1.keys.create"/,
      );
      expect(await requestRefusal(TASKS_SUBJECTS.get, { data: { caller_id: bob.agent.id, task_id: taskId } })).toMatch(
        /Permissions Violation for Publish to "relay.tasks.v1.get"/,
      );
      for (const stream of [eventStreamName(''), consoleSessionStreamName(''), rateLimitStreamName(''), `KV_${keyFilterBucketName('')}`]) {
        expect(await requestRefusal(`$JS.API.STREAM.DELETE.${stream}`, {})).toMatch(/Permissions Violation for Publish/);
        expect(await requestRefusal(`$JS.API.STREAM.PURGE.${stream}`, {})).toMatch(/Permissions Violation for Publish/);
      }
      expect(await requestRefusal(`$JS.API.STREAM.MSG.GET.${consoleSessionStreamName('')}`, { last_by_subj: 'relay.console.sessions.>' })).toMatch(
        /Permissions Violation/,
      );
      expect(await requestRefusal(`$JS.API.DIRECT.GET.KV_${keyFilterBucketName('')}`, { last_by_subj: `$KV.${keyFilterBucketName('')}.x` })).toMatch(
        /Permissions Violation/,
      );
      expect(await requestRefusal(`$JS.API.CONSUMER.CREATE.KV_${keyFilterBucketName('')}`, {})).toMatch(/Permissions Violation/);
      expect(await requestRefusal(`$JS.API.CONSUMER.DELETE.${eventStreamName('')}.notifier`, {})).toMatch(/Permissions Violation/);

      // Nor can it listen in: requests, other services' replies, the relay's subjects.
      for (const subject of ['relay.>', '_INBOX.>', `${natsInboxPrefix('edge', '')}.>`, '>']) {
        consumer.subscribe(subject);
      }
      await consumer.flush();
      await eventually(() => refused.filter((error) => error.operation === 'subscription').length === 4, 10000);
      // The event stream is whole.
      const info = await relayJsm.streams.info(eventStreamName(''));
      expect(info.state.messages).toBeGreaterThan(0);
    } finally {
      await consumer.close();
    }
  });

  it('denied the relay’s own processes nothing: every violation the server logged is the consumer’s', () => {
    const consumerKey = nkeys.fromSeed(new TextEncoder().encode(readFileSync(seedFile(dir, `consumer-${CONSUMER}`), 'utf8').trim())).getPublicKey();
    const violationLines = nats.log.split('\n').filter((line) => /Violation/.test(line));
    expect(violationLines.length).toBeGreaterThan(0);
    expect(violationLines.filter((line) => !line.includes(consumerKey))).toEqual([]);
  });

  it('refuses every relay request from a connection without credentials', async () => {
    await expect(connect({ servers: nats.url, maxReconnectAttempts: 0, timeout: 60000 })).rejects.toThrow(/Authorization Violation/i);
  });

  it('takes a rotated credential while the relay runs: both seeds valid, then the old one retired: the relay keeps answering', async () => {
    let sent = 0;
    const failures: string[] = [];
    let rotating = true;
    const traffic = (async () => {
      while (rotating) {
        try {
          await createTask(relay.url, alice, bob, `During the rotation ${sent}`);
          sent += 1;
        } catch (error) {
          failures.push(String(error));
        }
      }
    })();
    try {
      const oldSeed = readFileSync(seedFile(dir, 'tasks'), 'utf8');
      writeNatsCredentials({ dir, subjectPrefix: '', consumers: [CONSUMER], rotate: ['tasks', 'edge'], retire: false });
      expect(readFileSync(seedFile(dir, 'tasks'), 'utf8')).not.toBe(oldSeed);
      await nats.reload();
      const before = sent;
      await eventually(() => sent >= before + 3, 30000);
      writeNatsCredentials({ dir, subjectPrefix: '', consumers: [CONSUMER], rotate: [], retire: true });
      await nats.reload();
      // The server closed the connections still on the old seeds; they came back on the new ones.
      const oldKey = nkeys.fromSeed(new TextEncoder().encode(oldSeed.trim())).getPublicKey();
      const retiredFile = join(dir, 'retired-tasks.nk');
      writeFileSync(retiredFile, oldSeed);
      await expect(connectWithSeed(nats.url, retiredFile, natsInboxPrefix('tasks', ''))).rejects.toThrow(/Authorization Violation/i);
      expect(oldKey).toMatch(/^U/);
      const after = sent;
      await eventually(() => sent >= after + 3, 30000);
    } finally {
      rotating = false;
      await traffic;
    }
    // Each process still on a retired seed is closed by the server and reconnects on its new one at
    // once; a call whose reply was on its way in that instant is answered as a timeout, retryable, and
    // nothing else fails (docs/nats-security.md).
    expect(failures.every((failure) => /service_timeout|no_responders|service_unavailable/.test(failure))).toBe(true);
    expect(failures.length).toBeLessThanOrEqual(4);
    const taskId = await createTask(relay.url, alice, bob, 'After the rotation.');
    await ok(relay.url, bob.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
  });

  it('stops a service whose credential lacks one of its subjects, naming the subject and the permission', async () => {
    const narrowDir = mkdtempSync(join(tmpdir(), 'relay-nats-narrow-'));
    try {
      const directory = relayNatsPermissions('directory', '');
      const narrow = { ...directory, subscribe: directory.subscribe.filter((grant) => grant.subject !== DIRECTORY_SUBJECTS.createKey) };
      expect(narrow.subscribe.length).toBe(directory.subscribe.length - 1);
      writeNatsCredentials({ dir: narrowDir, subjectPrefix: '', consumers: [], rotate: [], retire: false });
      const auth = readFileSync(join(narrowDir, 'credentials', 'auth.conf'), 'utf8');
      const lacking = auth.replace(permissionsBlock(directory), permissionsBlock(narrow));
      expect(lacking).not.toBe(auth);
      writeFileSync(join(narrowDir, 'credentials', 'auth.conf'), lacking);
      writeFileSync(join(narrowDir, 'nats.conf'), `max_payload: 2MB\ninclude "credentials/auth.conf"\n`);
      const narrowNats = await PrivateNatsServer.start({ configFile: join(narrowDir, 'nats.conf') });
      const narrowRelay = new RelayHarness({
        subjectPrefix: '',
        cleanupNatsUrl: null,
        env: { NATS_URL: narrowNats.url },
        envOf: (holder) => seedEnv(narrowDir, holder),
      });
      try {
        const started = narrowRelay.startService('directory' satisfies ServiceName);
        await expect(started).rejects.toThrow(NatsPermissionError);
        await expect(started).rejects.toThrow(`NATS denies the directory permission to subscribe "${DIRECTORY_SUBJECTS.createKey}"`);
      } finally {
        await narrowRelay.stop();
        await narrowNats.stop();
      }
    } finally {
      rmSync(narrowDir, { recursive: true, force: true });
    }
  });
});

describe('NATS decentralized auth (.creds) over TLS with client certificates', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;

  /** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
  function makeCertificates(into: string): void {
    const run = (...args: string[]): void => {
      execFileSync('openssl', args, { cwd: into, stdio: 'pipe' });
    };
    const signed = (name: string, subject: string, extensions: string): void => {
      writeFileSync(join(into, `${name}.ext`), extensions);
      run('req', '-newkey', 'rsa:2048', '-nodes', '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`);
      run(
        'x509',
        '-req',
        '-in',
        `${name}.csr`,
        '-CA',
        'ca.pem',
        '-CAkey',
        'ca.key',
        '-CAcreateserial',
        '-days',
        '1',
        '-extfile',
        `${name}.ext`,
        '-out',
        `${name}.pem`,
      );
    };
    run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=relay test CA', '-keyout', 'ca.key', '-out', 'ca.pem');
    signed('server', '/CN=127.0.0.1', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    signed('client', '/CN=agentrelay', 'extendedKeyUsage=clientAuth\n');
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-nats-operator-'));
    makeCertificates(dir);
    await writeOperatorCredentials({ dir, subjectPrefix: '', consumers: [] });
    writeFileSync(
      join(dir, 'nats.conf'),
      [
        'max_payload: 2MB',
        `tls { cert_file: "${join(dir, 'server.pem')}", key_file: "${join(dir, 'server.key')}", ca_file: "${join(dir, 'ca.pem')}", verify: true }`,
        'include "credentials/operator.conf"',
        '',
      ].join('\n'),
    );
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: {
        NATS_URL: `tls://127.0.0.1:${nats.port}`,
        NATS_TLS_CA_FILE: join(dir, 'ca.pem'),
        NATS_TLS_CERT_FILE: join(dir, 'client.pem'),
        NATS_TLS_KEY_FILE: join(dir, 'client.key'),
      },
      envOf: (holder) => ({ NATS_CREDS_FILE: credsFile(dir, holder) }),
    });
  });

  afterAll(async () => {
    await relay?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('runs a handoff end to end with each process on its own user JWT', async () => {
    const carol = await registerAgent(relay, { handle: uniqueHandle('carol', 'acme'), name: 'Carol' });
    const dave = await registerAgent(relay, { handle: uniqueHandle('dave', 'acme'), name: 'Dave' });
    const taskId = await createTask(relay.url, carol, dave, 'Over TLS, with a JWT per service.');
    await ok(relay.url, dave.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, dave.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Done.' });
    expect((await ok(relay.url, carol.api_key, 'tasks/get', { task_id: taskId })).status.state).toBe('completed');
  });

  it('refuses a client without a certificate, and a service user JWT the request subjects of another', async () => {
    await expect(
      connect({ servers: `tls://127.0.0.1:${nats.port}`, tls: { caFile: join(dir, 'ca.pem') }, timeout: 5000, maxReconnectAttempts: 0 }),
    ).rejects.toThrow();
    const notifier = await connect({
      servers: `tls://127.0.0.1:${nats.port}`,
      tls: { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'client.pem'), keyFile: join(dir, 'client.key') },
      authenticator: credsAuthenticator(new Uint8Array(readFileSync(credsFile(dir, 'notifier')))),
      inboxPrefix: natsInboxPrefix('notifier', ''),
      maxReconnectAttempts: 0,
    });
    try {
      await expect(notifier.request(DIRECTORY_SUBJECTS.createKey, '{}', { timeout: 5000 })).rejects.toThrow(/Permissions Violation for Publish/);
    } finally {
      await notifier.close();
    }
  });
});
