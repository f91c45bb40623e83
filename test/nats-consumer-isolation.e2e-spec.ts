import { randomUUID } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import request from 'supertest';
import { connect, credsAuthenticator, nanos, nkeyAuthenticator, type Authenticator, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { DIRECTORY_SUBJECTS, EVENT_CONSUMER_SUBJECTS, eventConsumerEnsureSubject, type TaskEvent } from '@app/contracts';
import {
  consoleSessionStreamName,
  eventConsumerPermissions,
  eventStreamName,
  keyFilterBucketName,
  natsInboxPrefix,
  rateLimitStreamName,
  type RelayNatsRole,
} from '@app/messaging';
import { credsFile, seedFile, writeNatsCredentials, writeOperatorCredentials } from '../scripts/nats-credentials';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';

/**
 * The event consumer's credential, as `npm run nats:credentials` writes it, tried as an attacker
 * would: every reply subject it can name (of a request to the notifier, of a JetStream pull, of a
 * `+NXT` ack) aimed at a subject of the relay that a stream captures or a service answers. Nothing
 * may be stored or delivered there, and the consumer still reads its events.
 */

const CONSUMER = 'audit';
const STREAM = eventStreamName('');
const QUIET_MS = 1500;
const EVENT_STREAM_MAX_BYTES = 96 * 1024 * 1024;
const STATE_STREAM_MAX_BYTES = 128 * 1024 * 1024;
/** Where the consumer's account imports the relay's JetStream API (docs/nats-security.md; IMPORTED_JS_API). */
const IMPORTED_JS_API = 'JS.RELAY.API';

/** How one shape of credentials lets a test connect as one holder of it. */
type ConnectAs = (holder: RelayNatsRole | `consumer-${string}`, inboxPrefix: string) => Promise<NatsConnection>;

function connectWith(url: string, authenticator: Authenticator, inboxPrefix: string): Promise<NatsConnection> {
  return connect({ servers: url, authenticator, inboxPrefix, maxReconnectAttempts: 0, timeout: 60000 });
}

function ensurePacket(data: Record<string, unknown>): string {
  return JSON.stringify({ id: randomUUID(), pattern: EVENT_CONSUMER_SUBJECTS.ensure, data });
}

/** How many messages the stream holds on `subject` (NATS wildcards allowed). */
async function storedOn(jsm: JetStreamManager, stream: string, subject: string): Promise<number> {
  const info = await jsm.streams.info(stream, { subjects_filter: subject });
  return Object.values(info.state.subjects ?? {}).reduce((sum, count) => sum + count, 0);
}

/** The tricks and the checks, the same for both shapes of credentials. */
async function everyTrickRefused(options: { relay: RelayHarness; connectAs: ConnectAs; sender: RegisteredTestAgent; recipient: RegisteredTestAgent }) {
  const { relay, connectAs, sender, recipient } = options;
  const inbox = eventConsumerPermissions(CONSUMER, '').inboxPrefix;
  const consumer = await connectAs(`consumer-${CONSUMER}`, inbox);
  const notifier = await connectAs('notifier', natsInboxPrefix('notifier', ''));
  const edge = await connectAs('edge', natsInboxPrefix('edge', ''));
  // A listener with the directory's credential on a request subject the directory answers.
  const directory = await connectAs('directory', natsInboxPrefix('directory', ''));
  try {
    const relayJsm = await jetstreamManager(notifier);
    const edgeJsm = await jetstreamManager(edge);
    const onRequestSubject: Msg[] = [];
    directory.subscribe(DIRECTORY_SUBJECTS.createKey, { callback: (_error, message) => void onRequestSubject.push(message) });
    await directory.flush();

    // The legitimate path: its durable consumer, made by the notifier (acks due within 2 s, so anything a trick takes comes back soon).
    const ensured = await consumer.request(eventConsumerEnsureSubject(CONSUMER), ensurePacket({ start: 'all', ack_wait_ms: 2000 }), { timeout: 30000 });
    expect(ensured.json<{ response: { name: string } }>().response.name).toBe(CONSUMER);
    const firstTask = await createTask(relay.url, sender, recipient, 'Held by the consumer.');

    // One event delivered to the consumer's own inbox and not acknowledged: its ack subject is the `+NXT` trick's.
    const pullSubjects = [`$JS.API.CONSUMER.MSG.NEXT.${STREAM}.${CONSUMER}`, `${IMPORTED_JS_API}.CONSUMER.MSG.NEXT.${STREAM}.${CONSUMER}`];
    const held: Msg[] = [];
    consumer.subscribe(`${inbox}.held`, {
      callback: (_error, message) => {
        if (message.reply) held.push(message);
      },
    });
    await eventually(async () => {
      // The path of today's credentials and the path of an account of its own: whichever this NATS has.
      for (const subject of pullSubjects) consumer.publish(subject, JSON.stringify({ batch: 1, no_wait: true }), { reply: `${inbox}.held` });
      await consumer.flush();
      await new Promise((resolve) => setTimeout(resolve, 500));
      return held.length > 0;
    }, 60000);
    await createTask(relay.url, sender, recipient, 'Waiting for the consumer.');
    await createTask(relay.url, sender, recipient, 'Waiting for the consumer too.');
    await eventually(async () => (await relayJsm.consumers.info(STREAM, CONSUMER)).num_pending >= 2, 30000);

    const forgedEvent = `relay.events.task.forged_${randomUUID().replace(/-/g, '')}`;
    const forgedLease = `relay.ratelimit.forged_${randomUUID().replace(/-/g, '')}.1`;
    const before = await relayJsm.streams.info(STREAM);

    // (A) the notifier's answer aimed at the event stream, a rate-limit key and a request subject.
    for (const reply of [forgedEvent, forgedLease, DIRECTORY_SUBJECTS.createKey]) {
      consumer.publish(eventConsumerEnsureSubject(CONSUMER), ensurePacket({}), { reply });
    }
    // (B) pulls whose deliveries are aimed at the event stream, on either path, and a `+NXT` ack aimed there.
    for (let pull = 0; pull < 5; pull++) {
      for (const subject of pullSubjects) consumer.publish(subject, JSON.stringify({ batch: 5, no_wait: true }), { reply: forgedEvent });
    }
    consumer.publish(held[0].reply as string, '+NXT {"batch":5}', { reply: forgedEvent });
    await consumer.flush();

    // The control: a pull and an ensure of its own, sent after the tricks on the same connection, are
    // answered (JetStream and the notifier have handled the tricks before them); then nothing is stored where the tricks aimed.
    const answered: Msg[] = [];
    consumer.subscribe(`${inbox}.control`, { callback: (_error, message) => void answered.push(message) });
    for (const subject of pullSubjects) consumer.publish(subject, JSON.stringify({ batch: 1, expires: nanos(1000) }), { reply: `${inbox}.control` });
    await consumer.request(eventConsumerEnsureSubject(CONSUMER), ensurePacket({}), { timeout: 30000 });
    await eventually(() => answered.length > 0, 30000);
    await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
    expect(await storedOn(relayJsm, STREAM, forgedEvent)).toBe(0);
    expect(await storedOn(edgeJsm, rateLimitStreamName(''), forgedLease)).toBe(0);
    expect(onRequestSubject.map((message) => message.string())).toEqual([]);

    // The consumer reads on, as the docs show, until an event published after the tricks arrives.
    const lastTask = await createTask(relay.url, sender, recipient, 'After the tricks.');
    const events = await jetstream(consumer, { apiPrefix: IMPORTED_JS_API }).consumers.get(STREAM, CONSUMER);
    const messages = await events.consume({ expires: 5000 });
    const legitimateSequences = new Set<number>();
    const seenTasks = new Set<string>();
    const reading = (async () => {
      for await (const message of messages) {
        if (message.seq > before.state.last_seq && !message.subject.includes('forged')) legitimateSequences.add(message.seq);
        seenTasks.add(message.json<TaskEvent>().task_id);
        message.ack();
      }
    })();
    try {
      await eventually(() => seenTasks.has(lastTask) && seenTasks.has(firstTask), 60000);
    } finally {
      await messages.close();
      await reading;
    }
    expect(await storedOn(relayJsm, STREAM, forgedEvent)).toBe(0);
    expect(await storedOn(edgeJsm, rateLimitStreamName(''), forgedLease)).toBe(0);
    expect(onRequestSubject.map((message) => message.string())).toEqual([]);
    const after = await relayJsm.streams.info(STREAM);
    // Every message stored since is an event the relay published (the consumer read each one), none a copy.
    expect(after.state.last_seq - before.state.last_seq).toBe(legitimateSequences.size);
  } finally {
    await Promise.all([consumer, notifier, edge, directory].map((connection) => connection.close()));
  }
}

describe('an event consumer’s credential cannot write: nkey users in accounts (auth.conf)', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-nats-isolation-'));
    copyFileSync(join(process.cwd(), 'docker', 'nats', 'nats.conf'), join(dir, 'nats.conf'));
    writeNatsCredentials({ dir, subjectPrefix: '', consumers: [CONSUMER], rotate: [], retire: false });
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url, RELAY_EVENT_STREAM_MAX_BYTES: String(EVENT_STREAM_MAX_BYTES) },
      envOf: (holder) => ({ NATS_NKEY_SEED_FILE: seedFile(dir, holder) }),
    });
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
  }, 180000);

  afterAll(async () => {
    await relay?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores nothing where a reply it names points, and still reads its events', async () => {
    await everyTrickRefused({
      relay,
      sender: alice,
      recipient: bob,
      connectAs: (holder, inboxPrefix) =>
        connectWith(nats.url, nkeyAuthenticator(new TextEncoder().encode(readFileSync(seedFile(dir, holder), 'utf8').trim())), inboxPrefix),
    });
  }, 180000);

  it('bounds every stream it made in bytes: the event stream as configured, the others by default', async () => {
    await request(relay.url).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201);
    const seeded = (holder: RelayNatsRole): Promise<NatsConnection> =>
      connectWith(nats.url, nkeyAuthenticator(new TextEncoder().encode(readFileSync(seedFile(dir, holder), 'utf8').trim())), natsInboxPrefix(holder, ''));
    const [notifier, edge, directory] = await Promise.all([seeded('notifier'), seeded('edge'), seeded('directory')]);
    try {
      const maxBytes = async (connection: NatsConnection, stream: string): Promise<number> =>
        (await (await jetstreamManager(connection)).streams.info(stream)).config.max_bytes;
      expect(await maxBytes(notifier, STREAM)).toBe(EVENT_STREAM_MAX_BYTES);
      expect(await maxBytes(edge, consoleSessionStreamName(''))).toBe(STATE_STREAM_MAX_BYTES);
      expect(await maxBytes(edge, rateLimitStreamName(''))).toBe(STATE_STREAM_MAX_BYTES);
      expect(await maxBytes(directory, `KV_${keyFilterBucketName('')}`)).toBe(STATE_STREAM_MAX_BYTES);
    } finally {
      await Promise.all([notifier, edge, directory].map((connection) => connection.close()));
    }
  }, 180000);
});

describe('an event consumer’s credential cannot write: user JWTs of accounts (--operator)', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;
  let carol: RegisteredTestAgent;
  let dave: RegisteredTestAgent;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-nats-isolation-operator-'));
    await writeOperatorCredentials({ dir, subjectPrefix: '', consumers: [CONSUMER] });
    writeFileSync(join(dir, 'nats.conf'), ['max_payload: 2MB', 'include "credentials/operator.conf"', ''].join('\n'));
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url },
      envOf: (holder) => ({ NATS_CREDS_FILE: credsFile(dir, holder) }),
    });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', 'acme'), name: 'Carol' });
    dave = await registerAgent(relay, { handle: uniqueHandle('dave', 'acme'), name: 'Dave' });
  }, 180000);

  afterAll(async () => {
    await relay?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('stores nothing where a reply it names points, and still reads its events', async () => {
    await everyTrickRefused({
      relay,
      sender: carol,
      recipient: dave,
      connectAs: (holder, inboxPrefix) => connectWith(nats.url, credsAuthenticator(new Uint8Array(readFileSync(credsFile(dir, holder)))), inboxPrefix),
    });
  }, 180000);
});

describe('the notifier answers an ensure only on the caller’s inbox: a consumer left in the relay’s account by hand', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let relay: RelayHarness;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-nats-one-account-'));
    copyFileSync(join(process.cwd(), 'docker', 'nats', 'nats.conf'), join(dir, 'nats.conf'));
    writeNatsCredentials({ dir, subjectPrefix: '', consumers: [CONSUMER], rotate: [], retire: false });
    // As a hand-written configuration could have it: the consumer's user in the relay's account, with its own permissions.
    const authPath = join(dir, 'credentials', 'auth.conf');
    const generated = readFileSync(authPath, 'utf8');
    const consumerUser = /^ {6}\{ nkey: "[A-Z0-9]+", permissions: \$RELAY_CONSUMER_AUDIT \}$/m.exec(generated)?.[0];
    expect(consumerUser).toBeDefined();
    const oneAccount = generated
      .replace(/^ {6}\{ nkey: "[A-Z0-9]+", permissions: \$RELAY_NOTIFIER \}$/m, (notifierUser) => `${notifierUser},\n${consumerUser}`)
      .replace(/^ {2}AGENTRELAY_CONSUMER_AUDIT: \{[\s\S]*?^ {2}\}\n/m, '')
      .replace(/^ {4}exports: \[[\s\S]*?^ {4}\]\n/m, '');
    expect(oneAccount).not.toContain('AGENTRELAY_CONSUMER_AUDIT');
    writeFileSync(authPath, oneAccount);
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    relay = await RelayHarness.start({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url },
      envOf: (holder) => ({ NATS_NKEY_SEED_FILE: seedFile(dir, holder) }),
    });
  }, 180000);

  afterAll(async () => {
    await relay?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('drops an ensure whose reply is the event stream or a request subject, and answers one on its inbox', async () => {
    const seeded = (holder: RelayNatsRole | `consumer-${string}`, inboxPrefix: string): Promise<NatsConnection> =>
      connectWith(nats.url, nkeyAuthenticator(new TextEncoder().encode(readFileSync(seedFile(dir, holder), 'utf8').trim())), inboxPrefix);
    const consumer = await seeded(`consumer-${CONSUMER}`, eventConsumerPermissions(CONSUMER, '').inboxPrefix);
    const notifier = await seeded('notifier', natsInboxPrefix('notifier', ''));
    const directory = await seeded('directory', natsInboxPrefix('directory', ''));
    try {
      const relayJsm = await jetstreamManager(notifier);
      const onRequestSubject: Msg[] = [];
      directory.subscribe(DIRECTORY_SUBJECTS.createKey, { callback: (_error, message) => void onRequestSubject.push(message) });
      await directory.flush();
      const forgedEvent = `relay.events.task.forged_${randomUUID().replace(/-/g, '')}`;
      for (const reply of [forgedEvent, DIRECTORY_SUBJECTS.createKey]) {
        consumer.publish(eventConsumerEnsureSubject(CONSUMER), ensurePacket({}), { reply });
      }
      // The control: an ensure sent after them, on its own inbox, is answered.
      const answered = await consumer.request(eventConsumerEnsureSubject(CONSUMER), ensurePacket({}), { timeout: 30000 });
      expect(answered.json<{ response: { name: string } }>().response.name).toBe(CONSUMER);
      await new Promise((resolve) => setTimeout(resolve, QUIET_MS));
      expect(await storedOn(relayJsm, STREAM, forgedEvent)).toBe(0);
      expect(onRequestSubject.map((message) => message.string())).toEqual([]);
    } finally {
      await Promise.all([consumer, notifier, directory].map((connection) => connection.close()));
    }
  }, 180000);
});
