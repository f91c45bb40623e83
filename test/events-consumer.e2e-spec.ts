import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomBytes, randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect, nkeyAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { relayEventCloudEventHeaders, TASK_EVENT_POSITION_HEADER, taskEventSubject, type TaskEvent, type TaskEventType } from '@app/contracts';
import { RelayEventConsumer, type RelayEvent, type StartPosition } from '@app/events-consumer';
import { ensureEventStream, natsInboxPrefix, publishWithMsgId } from '@app/messaging';
import { seedFile, writeNatsCredentials } from '../scripts/nats-credentials';
import { eventually } from './support/eventually';
import { PrivateNatsServer } from './support/private-nats';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));
const CONSUMERS = ['ledger', 'from_time', 'from_seq', 'new_only', 'retrying', 'reconnecting'];
const TYPES: TaskEventType[] = ['created', 'accepted', 'message_appended', 'message_appended', 'input_required', 'message_appended'];
const QUIET = { info: () => undefined, warn: () => undefined };
/** The handshake deadline of every connection the test opens (nats.js's 20 s is not enough on a loaded machine). */
const CONNECT = { timeout: 60_000 };
/** How long a consumer keeps asking the relay for its durable consumer (the library's default is 60 s). */
const RELAY_BACK_PATIENCE_MS = 150_000;

/** A task event as the tasks service would publish it (the test publishes with the tasks service's credential). */
function taskEvent(taskId: string, sequence: number, type: TaskEventType): TaskEvent {
  return {
    schema_version: 1,
    event_id: randomUUID(),
    type,
    task_id: taskId,
    context_id: randomUUID(),
    sender: 'alice@acme',
    recipient: 'bob@acme',
    state: type === 'created' ? 'pending' : type === 'input_required' ? 'input_required' : 'accepted',
    sequence_no: sequence,
    occurred_at: new Date().toISOString(),
    task: { intent: 'inform', summary: 'Ledger test', message_count: sequence, latest_message: null, result_summary: null, reason: null },
  };
}

let position = 0;

/** Publishes the events, in order (one connection keeps its order), awaiting every acknowledgement. */
async function publish(js: JetStreamClient, events: TaskEvent[], timeoutMs = 20000): Promise<void> {
  for (let index = 0; index < events.length; index += 500) {
    await Promise.all(
      events.slice(index, index + 500).map((event) => {
        const subject = taskEventSubject(event.type);
        return publishWithMsgId(js, subject, event, event.event_id, timeoutMs, null, {
          ...relayEventCloudEventHeaders(subject, event, 'http://relay.test'),
          [TASK_EVENT_POSITION_HEADER]: String(++position),
        });
      }),
    );
  }
}

/** `tasks` events per task, interleaved across the tasks as a busy relay would publish them. */
function interleaved(tasks: string[], from: number, count: number): TaskEvent[] {
  const events: TaskEvent[] = [];
  for (let sequence = from; sequence < from + count; sequence++)
    for (const task of tasks) events.push(taskEvent(task, sequence, TYPES[(sequence - 1) % TYPES.length]));
  return events;
}

class LedgerProcess {
  private output = '';
  private readonly exited: Promise<void>;

  constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (this.output += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async start(env: Record<string, string>): Promise<LedgerProcess> {
    const child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER_TS, 'test/support/events/ledger-consumer.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ledger = new LedgerProcess(child);
    await eventually(() => expect(ledger.log).toContain('ledger consumer ready'), 60000, 100);
    return ledger;
  }

  get log(): string {
    if (this.child.exitCode !== null && !this.output.includes('stopped')) throw new Error(`the ledger consumer exited:\n${this.output.slice(-3000)}`);
    return this.output;
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    await this.exited;
  }
}

describe('the events consumer library on an event consumer’s credential', () => {
  let dir: string;
  let nats: PrivateNatsServer;
  let publisher: NatsConnection;
  let js: JetStreamClient;
  let db: pg.Client;
  let relay: RelayHarness;
  const table = `ledger_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-events-consumer-'));
    copyFileSync(join(ROOT, 'docker', 'nats', 'nats.conf'), join(dir, 'nats.conf'));
    writeNatsCredentials({ dir, subjectPrefix: '', consumers: CONSUMERS, rotate: [], retire: false });
    nats = await PrivateNatsServer.start({ configFile: join(dir, 'nats.conf') });
    // The tasks service's credential publishes, as the outbox relay does.
    const seed = readFileSync(seedFile(dir, 'tasks'), 'utf8').trim();
    publisher = await connect({
      servers: nats.url,
      authenticator: nkeyAuthenticator(new TextEncoder().encode(seed)),
      inboxPrefix: natsInboxPrefix('tasks', ''),
      ...CONNECT,
      // Across the restart test's server restart, however long a loaded machine takes to bring it back.
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
    });
    await ensureEventStream(await jetstreamManager(publisher), '');
    // The notifier makes each consumer's durable consumer (a consumer's credential may not); the directory answers it.
    relay = new RelayHarness({
      subjectPrefix: '',
      cleanupNatsUrl: null,
      env: { NATS_URL: nats.url },
      envOf: (holder) => ({ NATS_NKEY_SEED_FILE: seedFile(dir, holder) }),
    });
    await relay.startService('directory');
    await relay.startService('notifier');
    js = jetstream(publisher);
    db = new pg.Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    await db.query(
      `CREATE TABLE ${table} (n bigserial PRIMARY KEY, event_id uuid UNIQUE NOT NULL, task_id text NOT NULL, sequence_no int NOT NULL, stream_seq bigint NOT NULL)`,
    );
    await db.query(`CREATE TABLE ${table}_again (event_id uuid NOT NULL)`);
  }, 60000);

  afterAll(async () => {
    await db?.query(`DROP TABLE IF EXISTS ${table}, ${table}_again`).catch(() => undefined);
    await db?.end();
    await publisher?.close();
    await relay?.stop();
    await nats?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('10 000 events of 500 tasks, the consumer killed -9 twice: every event handled once, each task in order', async () => {
    const tasks = Array.from({ length: 500 }, (_, index) => `01TASK${String(index).padStart(20, '0')}`);
    const env = {
      NATS_URL: nats.url,
      CONSUMER_NAME: 'ledger',
      NATS_NKEY_SEED_FILE: seedFile(dir, 'consumer-ledger'),
      DATABASE_URL: testDatabaseUrl(),
      LEDGER_TABLE: table,
    };
    const count = async (): Promise<number> => Number((await db.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n);
    await publish(js, interleaved(tasks, 1, 10));
    let ledger = await LedgerProcess.start(env);
    await eventually(async () => expect(await count()).toBeGreaterThanOrEqual(1500), 120000, 20);
    await ledger.kill();
    // The second half arrives while the consumer is down and after it is back.
    const rest = publish(js, interleaved(tasks, 11, 10));
    ledger = await LedgerProcess.start(env);
    const recoveries = (): number => (ledger.log.match(/left events unacknowledged/g) ?? []).length;
    let recovered = recoveries();
    await eventually(async () => expect(await count()).toBeGreaterThanOrEqual(6000), 120000, 20);
    await ledger.kill();
    await rest;
    ledger = await LedgerProcess.start(env);
    recovered += recoveries();
    // Each kill left events delivered and not acknowledged, which the next run read again first.
    expect(recovered).toBe(2);
    await eventually(async () => expect(await count()).toBe(10000), 180000, 100);
    await ledger.kill('SIGTERM');
    const stopped = /ledger consumer stopped (.*)/.exec(ledger.log)?.[1];
    console.log(`ledger consumer, last run: ${stopped}`);

    const again = await db.query(`SELECT count(*) AS n FROM ${table}_again`);
    expect(Number(again.rows[0].n)).toBe(0);
    const { rows } = await db.query<{ task_id: string; sequences: number[] }>(
      `SELECT task_id, array_agg(sequence_no ORDER BY n) AS sequences FROM ${table} GROUP BY task_id`,
    );
    expect(rows.length).toBe(500);
    const expected = Array.from({ length: 20 }, (_, index) => index + 1);
    const outOfOrder = rows.filter((row) => JSON.stringify(row.sequences) !== JSON.stringify(expected));
    expect(outOfOrder).toEqual([]);
  }, 600000);

  it('retries a failing handler in place: its task’s later events wait, other tasks go on, nothing is handled twice', async () => {
    const events = interleaved(['01FAILING000000000000000000', '01HEALTHY000000000000000000'], 1, 5);
    const handled: RelayEvent[] = [];
    let failuresLeft = 3;
    const consumer = await RelayEventConsumer.start(
      {
        url: nats.url,
        name: 'retrying',
        credentials: { nkeySeedFile: seedFile(dir, 'consumer-retrying') },
        start: { from: 'new' },
        minRetryMs: 50,
        logger: QUIET,
        connectOptions: CONNECT,
      },
      (event) => {
        if (event.subject === '01FAILING000000000000000000' && event.data.sequence_no === 2 && failuresLeft-- > 0) throw new Error('not yet');
        handled.push(event);
      },
    );
    try {
      await publish(js, events);
      await eventually(() => expect(handled.length).toBe(events.length), 60000);
      const ofTask = (task: string): number[] => handled.filter((event) => event.subject === task).map((event) => event.data.sequence_no!);
      expect(ofTask('01FAILING000000000000000000')).toEqual([1, 2, 3, 4, 5]);
      expect(ofTask('01HEALTHY000000000000000000')).toEqual([1, 2, 3, 4, 5]);
      // The healthy task did not wait for the failing one.
      const healthyDone = handled.findIndex((event) => event.subject === '01HEALTHY000000000000000000' && event.data.sequence_no === 5);
      const failingSecond = handled.findIndex((event) => event.subject === '01FAILING000000000000000000' && event.data.sequence_no === 2);
      expect(healthyDone).toBeLessThan(failingSecond);
      expect(consumer.stats).toMatchObject({ handled: 10, failures: 3 });
    } finally {
      await consumer.stop();
    }
  });

  it('carries on across a NATS restart: the events published after it are handled once, in order', async () => {
    const handled: RelayEvent[] = [];
    const consumer = await RelayEventConsumer.start(
      {
        url: nats.url,
        name: 'reconnecting',
        credentials: { nkeySeedFile: seedFile(dir, 'consumer-reconnecting') },
        start: { from: 'new' },
        logger: QUIET,
        connectOptions: CONNECT,
      },
      (event) => {
        handled.push(event);
      },
    );
    try {
      const before = interleaved(['01RECONNECT0000000000000000'], 1, 5);
      await publish(js, before);
      await eventually(() => expect(handled.length).toBe(5), 60000);
      await nats.restartKeepingStore(500);
      const after = interleaved(['01RECONNECT0000000000000000'], 6, 5);
      // Publishing again is safe (the duplicate window drops what landed); short timeouts while the server comes back.
      await eventually(() => publish(js, after, 2000), 60000, 200);
      await eventually(() => expect(handled.map((event) => event.data.sequence_no)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 90000);
    } finally {
      await consumer.stop();
    }
  }, 180000);

  describe('start positions', () => {
    async function collect(name: string, start: StartPosition, until: (events: RelayEvent[]) => boolean): Promise<RelayEvent[]> {
      const seen: RelayEvent[] = [];
      const consumer = await RelayEventConsumer.start(
        {
          url: nats.url,
          name,
          credentials: { nkeySeedFile: seedFile(dir, `consumer-${name}`) },
          start,
          logger: QUIET,
          connectOptions: CONNECT,
          // Right after the restart test the relay's connections may still be coming back, slowly on a loaded machine.
          notifierPatienceMs: RELAY_BACK_PATIENCE_MS,
        },
        (event) => {
          seen.push(event);
        },
      );
      try {
        await eventually(() => expect(until(seen)).toBe(true), 60000);
        // Nothing more is left for it: what it saw is all the stream has for it.
        await eventually(async () => expect(await consumer.lag()).toMatchObject({ undelivered: 0, unacknowledged: 0 }), 30000);
      } finally {
        await consumer.stop();
      }
      return seen;
    }

    it('from time T gives exactly the events stored at or after T; from sequence N those from N on; new only, none before', async () => {
      const before = interleaved(['01BEFORE0000000000000000000'], 1, 20);
      await publish(js, before);
      // T falls strictly between the two batches on the server's clock (the same machine's).
      const afterBefore = Date.now();
      await eventually(() => expect(Date.now()).toBeGreaterThan(afterBefore + 2));
      const t = new Date();
      await eventually(() => expect(Date.now()).toBeGreaterThan(t.getTime() + 2));
      const after = interleaved(['01AFTER00000000000000000000'], 1, 30);
      await publish(js, after);

      const fromTime = await collect('from_time', { from: 'time', time: t }, (events) => events.length >= after.length);
      expect(fromTime.map((event) => event.id)).toEqual(after.map((event) => event.event_id));
      for (const event of fromTime) expect(event.storedAt.getTime()).toBeGreaterThanOrEqual(t.getTime());

      const tenth = fromTime[9].streamSequence;
      const fromSequence = await collect('from_seq', { from: 'sequence', sequence: tenth }, (events) => events.length >= 21);
      expect(fromSequence.map((event) => event.id)).toEqual(after.slice(9).map((event) => event.event_id));
      expect(fromSequence[0].cloudEvent?.type).toBe('dev.agentrelay.task.created.v1'.replace('created', after[9].type));

      const later = interleaved(['01LATER00000000000000000000'], 1, 5);
      const seen: RelayEvent[] = [];
      const newOnly = await RelayEventConsumer.start(
        {
          url: nats.url,
          name: 'new_only',
          credentials: { nkeySeedFile: seedFile(dir, 'consumer-new_only') },
          start: { from: 'new' },
          logger: QUIET,
          connectOptions: CONNECT,
          notifierPatienceMs: RELAY_BACK_PATIENCE_MS,
        },
        (event) => {
          seen.push(event);
        },
      );
      try {
        await publish(js, later);
        await eventually(() => expect(seen.map((event) => event.id)).toEqual(later.map((event) => event.event_id)), 60000);
      } finally {
        await newOnly.stop();
      }
    }, 420000);
  });
});
