import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { PubAck } from '@nats-io/jetstream';
import type { DataSource } from 'typeorm';
import type { JetStreamContext } from '@app/messaging';
import { DEFAULT_OUTBOX_RELAY_OPTIONS, type OutboxRelayOptions } from './outbox.constants';
import { OutboxRelayService, type UnpublishedRow } from './outbox-relay.service';

/** The relay's read of unpublished rows, as the fake outbox answers it. */
const UNPUBLISHED_READ = 'unpublished rows';

interface OutboxRow extends UnpublishedRow {
  published: boolean;
  attempts: number;
  last_error: string | null;
}

/** The outbox table as the relay queries it: unpublished rows in position order, published marks, failed attempts. */
class FakeOutbox {
  readonly rows: OutboxRow[] = [];

  add(taskId: string, count: number): void {
    for (let i = 0; i < count; i++) {
      const position = String(this.rows.length + 1);
      this.rows.push({
        id: `event-${position}`,
        position,
        task_id: taskId,
        subject: 'relay.events.task.message_appended',
        payload: { task_id: taskId, position },
        trace_parent: null,
        settled: true,
        published: false,
        attempts: 0,
        last_error: null,
      });
    }
  }

  readonly dataSource = {
    query: async (sql: string, params: unknown[]): Promise<unknown[]> => {
      await Promise.resolve();
      if (sql === UNPUBLISHED_READ) {
        const [limit, unmarked] = params as [number, string[]];
        return this.rows.filter((row) => !row.published && !unmarked.includes(row.id)).slice(0, limit);
      }
      if (sql.includes('SET published_at = now()')) {
        for (const row of this.rows) if ((params[0] as string[]).includes(row.id)) row.published = true;
        return [];
      }
      if (sql.includes('last_error = $2')) {
        const row = this.rows.find((candidate) => candidate.id === params[0]);
        if (row) {
          row.attempts += 1;
          row.last_error = params[1] as string;
        }
        return [];
      }
      throw new Error(`unexpected query: ${sql}`);
    },
  } as unknown as DataSource;
}

/**
 * JetStream as the relay sees it: acknowledgements come back a little later, in any order, a
 * message id it already stored is acknowledged as a duplicate and not stored again. `lose` makes
 * the first publish of a message id fail without storing it (a connection dropped under it);
 * `loseAck` stores it and fails the publish all the same (the acknowledgement lost).
 */
class FakeJetStream {
  readonly stored: Array<{ msgId: string; position: string; task: string }> = [];
  readonly sent: string[] = [];
  readonly lose = new Set<string>();
  readonly loseAck = new Set<string>();
  inFlight = 0;
  maxInFlight = 0;
  /** How many publishes were in flight as each one was sent. */
  readonly inFlightAtSend: number[] = [];
  /** Message ids whose acknowledgement waits until `acknowledge` is called with them. */
  readonly held = new Set<string>();
  private readonly release = new Map<string, () => void>();
  /** What each acknowledgement waits for first: a random few ms, unless a test wants no timer in it. */
  ackDelay = (): Promise<unknown> => new Promise((resolve) => setTimeout(resolve, Math.random() * 3));

  acknowledge(msgId: string): void {
    this.held.delete(msgId);
    this.release.get(msgId)?.();
  }

  readonly context = {
    js: {
      publish: async (_subject: string, data: string, options: { msgID: string; headers: { get(name: string): string } }): Promise<PubAck> => {
        this.sent.push(options.msgID);
        this.inFlightAtSend.push(this.inFlight);
        this.inFlight += 1;
        this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
        try {
          await this.ackDelay();
          if (this.held.has(options.msgID)) await new Promise<void>((resolve) => this.release.set(options.msgID, resolve));
          if (this.lose.delete(options.msgID)) throw new Error('connection lost before the server had the message');
          const duplicate = this.stored.some((message) => message.msgId === options.msgID);
          if (!duplicate) {
            const payload = JSON.parse(data) as { task_id: string; position: string };
            this.stored.push({ msgId: options.msgID, position: options.headers.get('Relay-Event-Position'), task: payload.task_id });
          }
          if (this.loseAck.delete(options.msgID)) throw new Error('timeout waiting for the acknowledgement');
          return { stream: 'RELAY_EVENTS', seq: this.stored.length, duplicate } as PubAck;
        } finally {
          this.inFlight -= 1;
        }
      },
    },
    connection: { isClosed: () => false },
  } as unknown as JetStreamContext;

  positionsOf(task: string): number[] {
    return this.stored.filter((message) => message.task === task).map((message) => Number(message.position));
  }
}

class RelayOnFakes extends OutboxRelayService {
  constructor(
    private readonly outbox: FakeOutbox,
    private readonly fake: FakeJetStream,
    options: Partial<OutboxRelayOptions>,
  ) {
    super(outbox.dataSource, {
      ...DEFAULT_OUTBOX_RELAY_OPTIONS,
      natsUrl: 'nats://unused',
      subjectPrefix: '',
      publicUrl: 'http://127.0.0.1:8080',
      databaseUrl: 'postgres://unused',
      ...options,
    });
  }

  protected override readUnpublished(limit: number, unmarked: string[]): Promise<UnpublishedRow[]> {
    return this.outbox.dataSource.query(UNPUBLISHED_READ, [limit, unmarked]) as Promise<UnpublishedRow[]>;
  }

  protected override ensureJetStream(): Promise<JetStreamContext> {
    return Promise.resolve(this.fake.context);
  }
}

describe('OutboxRelayService publishing', () => {
  let outbox: FakeOutbox;
  let jetStream: FakeJetStream;
  let relay: RelayOnFakes;

  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(new Logger()));

  beforeEach(() => {
    outbox = new FakeOutbox();
    jetStream = new FakeJetStream();
  });

  afterEach(async () => {
    await relay?.markPublished();
  });

  /** The outbox's positions of `task`, in order: what its stream must hold. */
  const positionsOf = (task: string): number[] => outbox.rows.filter((row) => row.task_id === task).map((row) => Number(row.position));

  it('awaits many acknowledgements at once, never more than publishConcurrency', async () => {
    for (let task = 0; task < 60; task++) outbox.add(`task-${task}`, 1);
    relay = new RelayOnFakes(outbox, jetStream, { batchSize: 100, publishConcurrency: 8 });
    expect(await relay.relayOnce()).toBe(60);
    expect(jetStream.stored).toHaveLength(60);
    expect(jetStream.maxInFlight).toBe(8);
    await relay.markPublished();
    expect(outbox.rows.every((row) => row.published)).toBe(true);
  });

  it('sends a task’s next event only after its previous one is acknowledged', async () => {
    outbox.add('task-a', 20);
    relay = new RelayOnFakes(outbox, jetStream, { batchSize: 100, publishConcurrency: 16 });
    await relay.relayOnce();
    expect(jetStream.maxInFlight).toBe(1);
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
  });

  it('keeps every task in position order and loses nothing when a publish fails mid-batch', async () => {
    for (let round = 0; round < 5; round++) for (const task of ['task-a', 'task-b', 'task-c', 'task-d']) outbox.add(task, 1);
    // Task a's second event is lost on the way while the other tasks' later events land.
    const lost = outbox.rows.filter((row) => row.task_id === 'task-a')[1];
    jetStream.lose.add(lost.id);
    relay = new RelayOnFakes(outbox, jetStream, { batchSize: 100, publishConcurrency: 16 });

    await expect(relay.relayOnce()).rejects.toThrow('connection lost');
    expect(lost.attempts).toBe(1);
    expect(lost.last_error).toBe('connection lost before the server had the message');
    // Nothing of task a after the lost event went out.
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a').slice(0, 1));

    while ((await relay.relayOnce()) > 0);
    for (const task of ['task-a', 'task-b', 'task-c', 'task-d']) expect(jetStream.positionsOf(task)).toEqual(positionsOf(task));
    await relay.markPublished();
    expect(outbox.rows.every((row) => row.published)).toBe(true);
  });

  it('re-sends an event whose acknowledgement was lost before the task’s next one, and the duplicate is dropped', async () => {
    outbox.add('task-a', 3);
    outbox.add('task-b', 3);
    const unacknowledged = outbox.rows[1];
    jetStream.loseAck.add(unacknowledged.id);
    relay = new RelayOnFakes(outbox, jetStream, { batchSize: 100, publishConcurrency: 16 });

    await expect(relay.relayOnce()).rejects.toThrow('timeout');
    while ((await relay.relayOnce()) > 0);
    expect(jetStream.sent.filter((id) => id === unacknowledged.id)).toHaveLength(2);
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
    expect(jetStream.positionsOf('task-b')).toEqual(positionsOf('task-b'));
  });

  it('publishes what a writer committed at once, the earlier unpublished events of its task first, each after the previous one', async () => {
    outbox.add('task-a', 4);
    outbox.add('task-b', 2);
    relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
    // A change of task a hands over its task's three earlier unpublished events and its own; a create of task b its one.
    relay.publishCommitted(outbox.rows.filter((row) => row.task_id === 'task-a'));
    relay.publishCommitted(outbox.rows.filter((row) => row.task_id === 'task-b').slice(0, 1));
    relay.publishCommitted(outbox.rows.filter((row) => row.task_id === 'task-b').slice(1));
    await relay.publishesUnderWay();
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
    expect(jetStream.positionsOf('task-b')).toEqual(positionsOf('task-b'));
    // Handed over again (a later change read them before they were marked): not sent again.
    relay.publishCommitted(outbox.rows.filter((row) => row.task_id === 'task-a'));
    await relay.publishesUnderWay();
    expect(jetStream.sent).toHaveLength(6);
    await relay.markPublished();
    expect(outbox.rows.every((row) => row.published)).toBe(true);
    // Nothing is left for the sweep.
    expect(await relay.relayOnce()).toBe(0);
  });

  it('sends the commits of one turn of the event loop together, and the next turn once they are acknowledged', async () => {
    for (const task of ['task-a', 'task-b', 'task-c']) outbox.add(task, 1);
    outbox.add('task-d', 1);
    relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
    const [a, b, c, d] = outbox.rows;
    relay.publishCommitted([a]);
    relay.publishCommitted([b]);
    relay.publishCommitted([c]);
    // Nothing leaves within the turn of the commits.
    await Promise.resolve();
    expect(jetStream.sent).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    while (jetStream.sent.length < 3) await Promise.resolve();
    expect(jetStream.inFlight).toBe(3);
    // A commit while they are in flight waits for their acknowledgements.
    relay.publishCommitted([d]);
    await relay.publishesUnderWay();
    expect(jetStream.sent).toEqual([a.id, b.id, c.id, d.id]);
    expect(jetStream.inFlightAtSend).toEqual([0, 1, 2, 0]);
  });

  it('sends the next event of a commit as soon as its task’s previous one is acknowledged, whatever other tasks have in flight', async () => {
    outbox.add('task-b', 1);
    outbox.add('task-a', 3);
    const [slow, ...events] = outbox.rows;
    jetStream.held.add(slow.id);
    // No timer runs: a publish that waited for other tasks' acknowledgements (or a timeout) would never leave.
    jetStream.ackDelay = () => new Promise((resolve) => setImmediate(resolve));
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
      relay.publishCommitted([slow]);
      relay.publishCommitted(events);
      for (let turns = 0; turns < 1000 && jetStream.stored.length < events.length; turns++) await new Promise((resolve) => setImmediate(resolve));
      expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
      // Each after the previous one was acknowledged, beside the other task's publish still in flight.
      expect(jetStream.inFlightAtSend).toEqual([0, 1, 1, 1]);
      jetStream.acknowledge(slow.id);
      await relay.publishesUnderWay();
    } finally {
      jest.useRealTimers();
    }
    expect(jetStream.positionsOf('task-b')).toEqual(positionsOf('task-b'));
  });

  it('sends a commit’s turn without waiting for another task’s event that went out behind its previous one', async () => {
    outbox.add('task-a', 2);
    outbox.add('task-c', 1);
    const [first, chained, other] = outbox.rows;
    jetStream.held.add(chained.id);
    jetStream.ackDelay = () => new Promise((resolve) => setImmediate(resolve));
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
      relay.publishCommitted([first, chained]);
      for (let turns = 0; turns < 1000 && jetStream.sent.length < 2; turns++) await new Promise((resolve) => setImmediate(resolve));
      expect(jetStream.sent).toEqual([first.id, chained.id]);
      relay.publishCommitted([other]);
      for (let turns = 0; turns < 1000 && !jetStream.positionsOf('task-c').length; turns++) await new Promise((resolve) => setImmediate(resolve));
      expect(jetStream.positionsOf('task-c')).toEqual(positionsOf('task-c'));
      jetStream.acknowledge(chained.id);
      await relay.publishesUnderWay();
    } finally {
      jest.useRealTimers();
    }
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
  });

  it('leaves an event whose publish after the commit failed, and the rest of its task, to the sweep, which keeps their order', async () => {
    outbox.add('task-a', 3);
    const [first] = outbox.rows;
    jetStream.lose.add(first.id);
    relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
    relay.publishCommitted(outbox.rows.slice(0, 1));
    relay.publishCommitted(outbox.rows.slice(1));
    await relay.publishesUnderWay();
    expect(jetStream.stored).toHaveLength(0);
    expect(jetStream.sent).toEqual([first.id]);
    expect(await relay.relayOnce()).toBe(3);
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
  });

  it('sweeps no event of a task whose oldest unpublished event is young: its writer publishes them', async () => {
    outbox.add('task-a', 3);
    outbox.add('task-b', 1);
    outbox.rows[0].settled = false;
    relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
    expect(await relay.relayOnce()).toBe(1);
    expect(jetStream.positionsOf('task-a')).toEqual([]);
    expect(jetStream.positionsOf('task-b')).toEqual(positionsOf('task-b'));
    outbox.rows[0].settled = true;
    expect(await relay.relayOnce()).toBe(3);
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
  });

  it('sends a swept event only after the publish under way of its task’s earlier one', async () => {
    outbox.add('task-a', 2);
    relay = new RelayOnFakes(outbox, jetStream, { publishConcurrency: 16 });
    relay.publishCommitted(outbox.rows.slice(0, 1));
    // The sweep does not read the event being published, and sends the next one behind it.
    expect(await relay.relayOnce()).toBe(1);
    await relay.publishesUnderWay();
    expect(jetStream.positionsOf('task-a')).toEqual(positionsOf('task-a'));
    expect(jetStream.sent).toHaveLength(2);
  });

  it('reads no more rows while a batch of published events could not be marked', async () => {
    for (let task = 0; task < 4; task++) outbox.add(`task-${task}`, 1);
    relay = new RelayOnFakes(outbox, jetStream, { batchSize: 4, publishConcurrency: 4 });
    const query = outbox.dataSource.query.bind(outbox.dataSource);
    let marksFail = true;
    outbox.dataSource.query = async (sql: string, params: unknown[]) => {
      if (marksFail && sql.includes('SET published_at = now()')) throw new Error('database unavailable');
      return query(sql, params);
    };
    expect(await relay.relayOnce()).toBe(4);
    outbox.add('task-late', 1);
    await expect(relay.relayOnce()).rejects.toThrow('could not be marked');
    expect(jetStream.stored).toHaveLength(4);
    marksFail = false;
    expect(await relay.relayOnce()).toBe(1);
    expect(jetStream.stored).toHaveLength(5);
  });
});
