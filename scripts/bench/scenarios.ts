/**
 * The scenarios. `create`, `a2a-send` and `get` run every server that can do them, in alternating
 * rounds (the order rotates each round) so drift on a shared machine hits all of them alike;
 * `lifecycle`, `inbox` and `fanout` are the relay's alone. Every window is bounded in requests and
 * time, and brackets its load with a CPU sample of every process.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { loadavg } from 'node:os';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { runWindow, sleep, type Call, type HttpClient, type WindowLimits, type WindowResult } from './load-generator';
import type { EventLag, EventWatch } from './event-watch';
import { CHAIN_CREATES, ChainRoots, type ChainCreate } from './chain-creates';
import { UPSTREAM_MODES, isUpstreamScenario, type BenchOptions, type ScenarioName, type ServerName, type UpstreamMode, type UpstreamScenario } from './options';
import { growthLine, PgGrowth, type WindowGrowth } from './pg-growth';
import type { GroupUsage, ProcessSampler } from './proc-sampler';
import { TASK_EVENTS_PAGE_LIMIT, TASK_LIMITS } from '@app/contracts';
import { listQuery } from '../../apps/tasks/src/tasks/store/list-query';
import { INBOX_EVENTS_AFTER_SQL } from '../../apps/tasks/src/tasks/store/task-event-replay';
import { readTask } from '../../apps/tasks/src/tasks/store/read-query';
import { CHAIN_FACTS_SQL, PAIR_RECENT_SQL, PARENT_CHAIN_SQL, TRACE_PARENT_SQL } from '../../apps/tasks/src/tasks/store/sql/chain-facts.sql';
import {
  baselineGet,
  baselineSendMessage,
  relayCreate,
  relayCreateLinked,
  relayGet,
  relayInbox,
  relayInboxReadyId,
  relayInboxReplay,
  relayLifecycle,
  relaySendMessage,
  type RelayFixture,
} from './relay-fixture';
import { parseMachineBusyTicks, perRequest, summarizeLatencies, type LatencySummary } from './stats';
import { explainRelayWrites, PLAN_SETTLING_RUNS, sqlLiteral, writePlanLines, type WritePlan } from './write-plans';
import {
  epochMs,
  FLOOR_PROCESSES,
  handoffText,
  latencyFigures,
  sdkClient,
  sendAndWait,
  stageBreakdown,
  UPSTREAM_PROCESS,
  upstreamBaseUrl,
  type SentHandoff,
  type UpstreamPath,
  type UpstreamWindow,
} from './upstream-handoff';

/** The processes that do a server's work (its total CPU), Postgres background and the bench apart. */
export const SERVER_GROUPS: Record<ServerName, string[]> = {
  relay: ['edge', 'tasks', 'directory', 'notifier', 'nats-server', 'pg-relay'],
  'sdk-postgres': ['sdk-postgres', 'pg-sdk-postgres'],
  'sdk-memory': ['sdk-memory'],
  floor: ['floor', 'pg-floor'],
};
export const SHARED_GROUPS = ['pg-background', 'bench'];

export interface WindowRecord {
  server: ServerName;
  /** create, a2a-send, get, lifecycle, inbox-10000…, fanout. */
  scenario: string;
  concurrency: number;
  round: number;
  /** What one "request" is: one HTTP call, one lifecycle (5 calls) or one delivered event. */
  unit: 'request' | 'lifecycle' | 'event';
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  latencyMs: LatencySummary;
  cpuMs: Record<string, number>;
  cpuMsPerRequest: Record<string, number>;
  /** Sum over the server's own processes (SERVER_GROUPS), Postgres background excluded. */
  totalCpuMsPerRequest: number;
  /** The relay's create windows: commit → published of the window's events, and the backlog at its end. */
  events?: EventLag;
  /** What grew in Postgres during the window (every server's tables, the WAL, the outbox). */
  growth?: WindowGrowth;
  /** The machine during the window: its 1-minute load average at the end, the CPU ms all its processes used, and those of processes the bench does not sample (other work on the machine). */
  machine?: { loadAverage: number; busyCpuMs: number; othersCpuMs: number };
  errorSamples?: string[];
}

export interface InboxPlan {
  size: number;
  seedSeconds: number;
  /** The inbox list's plan. */
  explain: string;
  /** Every measured operation's plan at this size: get, inbox (the list), watch (the live inbox's replay). */
  plans: Record<string, string>;
  /** The plans of the service's writes at this size (create, append, transition), each rolled back. */
  writes: WritePlan[];
}

export interface Target {
  name: ServerName;
  client: HttpClient;
}

/** Where the `upstream*` scenarios find the relay and the upstream agents' process (the agents registered with the relay are the fixture's `upstreams`). */
export interface UpstreamSetup {
  relayUrl: string;
  upstreamUrl: string;
  /** The handoff floor's edge, in front of the polled agent (`upstream`; none when the bench runs its own NATS server). */
  floorUrl?: string;
}

export class Bench {
  readonly records: WindowRecord[] = [];
  readonly inboxPlans: InboxPlan[] = [];
  /** The `upstream*` scenarios' windows, both paths. */
  readonly upstreamWindows: UpstreamWindow[] = [];
  /**
   * Per `upstream*` scenario, CPU ms per second of each process with no load: before its windows
   * and after its last one (a poller that stays busy once there was work shows there).
   */
  readonly upstreamIdle: Partial<Record<UpstreamMode, { before: Record<string, number>; after: Record<string, number> }>> = {};
  /** The `create-linked` scenario's chain roots (made once it runs). */
  chainRoots?: ChainRoots;
  /** After the `create-linked` windows: the plans of the statements a create reads its chain with (and an unlinked one its pair), by name. */
  readonly chainPlans: Record<string, string> = {};
  /** Task ids each server acknowledged as created, to count them in Postgres at the end. */
  readonly acknowledged = new Map<ServerName, string[]>();
  /** Task ids per client slot, for `get` (the relay only lets the sender or recipient read a task). */
  private readonly bySlot = new Map<ServerName, string[][]>();
  private readonly growth: PgGrowth;

  constructor(
    readonly options: BenchOptions,
    readonly sampler: ProcessSampler,
    readonly targets: Target[],
    readonly relay: RelayFixture,
    readonly db: pg.Client,
    readonly sink: FanoutSink,
    readonly events: EventWatch,
    readonly upstreamSetup?: UpstreamSetup,
  ) {
    this.growth = new PgGrowth(db);
  }

  private target(name: ServerName): Target {
    return this.targets.find((target) => target.name === name)!;
  }

  /** Notes an acknowledged task; with a slot, also as readable by that slot's pair (for `get`). */
  private remember(server: ServerName, slot: number | undefined, taskId: string): void {
    const all = this.acknowledged.get(server) ?? [];
    all.push(taskId);
    this.acknowledged.set(server, all);
    if (slot === undefined) return;
    const slots = this.bySlot.get(server) ?? [];
    (slots[slot] ??= []).push(taskId);
    this.bySlot.set(server, slots);
  }

  private limits(concurrency: number, maxRequests = this.options.windowRequests, minRequests = this.options.windowMinRequests): WindowLimits {
    return { concurrency, maxRequests, maxMs: this.options.windowMs, minRequests: Math.min(minRequests, maxRequests), hardMaxMs: this.options.windowMs * 5 };
  }

  /** An unmeasured warm-up (JIT, pools, caches): a few clients only, so its in-flight tail stays short. */
  private warmup(concurrency: number, maxRequests = this.options.warmupRequests): WindowLimits {
    return { concurrency: Math.min(concurrency, 4), maxRequests, maxMs: this.options.warmupMs };
  }

  /** One measured window: growth snapshot, CPU sample, load, CPU sample, growth snapshot. */
  async measure(
    server: ServerName,
    scenario: string,
    concurrency: number,
    round: number,
    unit: WindowRecord['unit'],
    run: () => Promise<WindowResult>,
  ): Promise<WindowRecord> {
    const { window, usage, growth, machine } = await this.sampleWindow(run);
    const record = { ...this.record(server, scenario, concurrency, round, unit, window, usage), growth, machine };
    this.records.push(record);
    const cpu = Number.isFinite(record.totalCpuMsPerRequest) ? record.totalCpuMsPerRequest.toFixed(2) : '–';
    console.log(
      `  ${scenario.padEnd(12)} c=${String(concurrency).padEnd(3)} r${round + 1} ${server.padEnd(13)} ${record.rps.toFixed(0).padStart(6)}/s  p50 ${record.latencyMs.p50.toFixed(1)} p99 ${record.latencyMs.p99.toFixed(1)} ms  cpu ${cpu} ms/${unit}  errors ${record.errors}`,
    );
    if (window.errorSamples.length > 0) console.log(`    errors: ${window.errorSamples.join(' | ')}`);
    console.log(
      `    pg: ${growthLine(growth)} · machine: load ${machine.loadAverage.toFixed(1)}, other processes ${(machine.othersCpuMs / window.seconds / 10).toFixed(0)} % of a CPU`,
    );
    return record;
  }

  /** One window's load, bracketed by a growth snapshot and a CPU sample of every process on each side. */
  private async sampleWindow(
    run: () => Promise<WindowResult>,
  ): Promise<{ window: WindowResult; usage: Map<string, GroupUsage>; growth: WindowGrowth; machine: NonNullable<WindowRecord['machine']> }> {
    const busyTicks = (): number => parseMachineBusyTicks(readFileSync('/proc/stat', 'utf8'));
    const { result, growth } = await this.growth.around(async () => {
      const before = await this.sampler.sample();
      const busyBefore = busyTicks();
      const window = await run();
      const busyAfter = busyTicks();
      const after = await this.sampler.sample();
      return { window, usage: this.sampler.usage(before, after), busyCpuMs: ((busyAfter - busyBefore) * 1000) / this.sampler.clockTicks };
    });
    const { window, usage, busyCpuMs } = result;
    const sampledCpuMs = [...usage.values()].reduce((sum, used) => sum + used.cpuMs, 0);
    return { window, usage, growth, machine: { loadAverage: loadavg()[0], busyCpuMs, othersCpuMs: Math.max(0, busyCpuMs - sampledCpuMs) } };
  }

  private record(
    server: ServerName,
    scenario: string,
    concurrency: number,
    round: number,
    unit: WindowRecord['unit'],
    window: WindowResult,
    usage: Map<string, GroupUsage>,
  ): WindowRecord {
    const cpuMs: Record<string, number> = {};
    const cpuMsPerRequest: Record<string, number> = {};
    const counted = window.requests - window.errors;
    for (const name of [...SERVER_GROUPS[server], ...SHARED_GROUPS]) {
      const used = usage.get(name);
      if (!used) continue;
      cpuMs[name] = used.cpuMs;
      cpuMsPerRequest[name] = perRequest(used.cpuMs, counted);
    }
    const total = SERVER_GROUPS[server].reduce((sum, name) => sum + (cpuMs[name] ?? 0), 0);
    return {
      server,
      scenario,
      concurrency,
      round,
      unit,
      requests: window.requests,
      errors: window.errors,
      seconds: window.seconds,
      rps: window.seconds > 0 ? counted / window.seconds : 0,
      latencyMs: summarizeLatencies(window.latenciesMs),
      cpuMs,
      cpuMsPerRequest,
      totalCpuMsPerRequest: perRequest(total, counted),
      ...(window.errorSamples.length ? { errorSamples: window.errorSamples } : {}),
    };
  }

  /** A create call; with `committed`, it notes when each create answered (its commit). */
  private createCall(target: Target, kind: 'create' | 'a2a-send', committed?: Map<string, number>): Call {
    const pairs = this.relay.pairs;
    return async (index, slot) => {
      const id =
        target.name === 'relay'
          ? kind === 'create'
            ? await relayCreate(target.client, pairs[slot], index)
            : await relaySendMessage(target.client, pairs[slot], index)
          : await baselineSendMessage(target.client, index);
      if (id) {
        committed?.set(id, performance.now());
        this.remember(target.name, slot, id);
      }
      return id !== undefined;
    };
  }

  /** A relay create window, then its events figure: commit → published and the backlog at its end. */
  private async measureCreates(scenario: 'create' | 'a2a-send', concurrency: number, round: number, target: Target): Promise<void> {
    const committed = new Map<string, number>();
    let endedAt = 0;
    const record = await this.measure(target.name, scenario, concurrency, round, 'request', async () => {
      const window = await runWindow(this.limits(concurrency), this.createCall(target, scenario, committed));
      endedAt = performance.now();
      return window;
    });
    const events = await this.events.lag(committed, endedAt, this.options.fanoutWaitMs);
    record.events = events;
    console.log(
      `    events: commit → published p50 ${events.p50.toFixed(1)} p99 ${events.p99.toFixed(1)} ms, backlog at the end ${events.backlog} of ${committed.size}${events.lost > 0 ? `, ${events.lost} never published` : ''}`,
    );
  }

  private getCall(target: Target): Call {
    const slots = this.bySlot.get(target.name) ?? [];
    return (index, slot) => {
      const ids = slots[slot] ?? [];
      const id = ids[index % Math.max(1, ids.length)];
      if (!id) return Promise.resolve(false);
      return target.name === 'relay' ? relayGet(target.client, this.relay.pairs[slot].sender, id, index) : baselineGet(target.client, id, index);
    };
  }

  /** Every server that can do `scenario`, in alternating rounds at every concurrency. */
  async compare(scenario: 'create' | 'a2a-send' | 'get'): Promise<void> {
    for (const concurrency of this.options.concurrencies) {
      if (scenario === 'get') await this.ensureTasks(concurrency);
      const call = (target: Target): Call => (scenario === 'get' ? this.getCall(target) : this.createCall(target, scenario));
      for (const target of this.targets) await runWindow(this.warmup(concurrency), call(target));
      for (let round = 0; round < this.options.rounds; round++) {
        const order = rotate(this.targets, round);
        for (const target of order) {
          if (target.name === 'relay' && scenario !== 'get') await this.measureCreates(scenario, concurrency, round, target);
          else await this.measure(target.name, scenario, concurrency, round, 'request', () => runWindow(this.limits(concurrency), call(target)));
          await sleep(100);
        }
      }
    }
  }

  /** Makes sure every slot of every server has tasks to read. */
  private async ensureTasks(concurrency: number): Promise<void> {
    for (const target of this.targets) {
      const slots = this.bySlot.get(target.name) ?? [];
      for (let slot = 0; slot < concurrency; slot++) {
        if ((slots[slot]?.length ?? 0) > 0) continue;
        const create = this.createCall(target, 'create');
        for (let i = 0; i < 5; i++) await create(i, slot);
      }
    }
  }

  async lifecycle(): Promise<void> {
    const relay = this.target('relay');
    for (const concurrency of this.options.concurrencies) {
      const call: Call = async (index, slot) => {
        const id = await relayLifecycle(relay.client, this.relay.pairs[slot], index);
        if (id) this.remember('relay', slot, id);
        return id !== undefined;
      };
      await runWindow(this.warmup(concurrency, Math.ceil(this.options.warmupRequests / 5)), call);
      for (let round = 0; round < this.options.rounds; round++) {
        await this.measure('relay', 'lifecycle', concurrency, round, 'lifecycle', () =>
          runWindow(this.limits(concurrency, Math.ceil(this.options.windowRequests / 5), Math.ceil(this.options.windowMinRequests / 5)), call),
        );
      }
    }
  }

  /**
   * Seeds the tasks table up to each size with one INSERT … SELECT generate_series (one task in
   * INBOX_SHARE to the measured recipient, the others to 1,000 other recipients), each task with its
   * published `created` event in the outbox, then VACUUM ANALYZE, as a table of that size would have
   * been by autovacuum long before. At each size it prints the EXPLAIN (ANALYZE, BUFFERS) of the SQL
   * the tasks service runs for a get, an inbox page and the live inbox's replay, and measures create,
   * get, the inbox list and the replay.
   */
  async inbox(): Promise<void> {
    const relay = this.target('relay');
    const { sender, recipient } = this.relay.inbox;
    let seeded = 0;
    const sizes = [...this.options.inboxSizes].sort((a, b) => a - b);
    const smallest = sizes[0];
    for (const size of sizes) {
      const started = performance.now();
      await this.db.query(
        `INSERT INTO "tasks"."tasks" ("id", "context_id", "sender_id", "sender_handle", "sender_name", "recipient_id", "recipient_handle", "recipient_name",
                                   "summary", "created_at", "updated_at", "status_timestamp")
         SELECT lpad(i::text, 26, '0'), 'bench-ctx-' || i, $1, $2, 'inbox-s',
                CASE WHEN i % ${INBOX_SHARE} = 0 THEN $3 ELSE 'bench-other-' || (i % 1000) END,
                CASE WHEN i % ${INBOX_SHARE} = 0 THEN $4 ELSE 'other-' || (i % 1000) || '@bench' END,
                'inbox-r', 'Seeded handoff ' || i, ts, ts, ts
           FROM generate_series($5::int, $6::int) AS i, LATERAL (SELECT now() - make_interval(secs => ($6::int - i) / 1000.0) AS ts) AS l`,
        [sender.id, sender.handle, recipient.id, recipient.handle, seeded + 1, size],
      );
      await this.db.query(
        `INSERT INTO "tasks"."outbox_events" ("id", "subject", "type", "task_id", "payload", "created_at", "published_at")
         SELECT gen_random_uuid(), 'relay.events.task.created', 'created', t."id",
                jsonb_build_object('schema_version', 1, 'type', 'created', 'task_id', t."id", 'sender', t."sender_handle", 'recipient', t."recipient_handle",
                                   'state', 'pending', 'task', jsonb_build_object('summary', t."summary")),
                t."created_at", t."created_at"
           FROM "tasks"."tasks" t WHERE t."id" BETWEEN lpad($1::text, 26, '0') AND lpad($2::text, 26, '0') ORDER BY t."id"`,
        [seeded + 1, size],
      );
      await this.db.query(`VACUUM ANALYZE "tasks"."tasks"`);
      await this.db.query(`VACUUM ANALYZE "tasks"."outbox_events"`);
      const seedSeconds = (performance.now() - started) / 1000;
      seeded = size;
      console.log(
        `\n  size: ${size.toLocaleString('en-US')} tasks, ${Math.floor(size / INBOX_SHARE).toLocaleString('en-US')} of them the recipient's, each with its event (seeded and vacuumed in ${seedSeconds.toFixed(1)} s)`,
      );
      const seededTask = lpad(String(Math.floor(size / INBOX_SHARE) * INBOX_SHARE));
      const replay = await this.prepareReplay();
      const plans: Record<string, string> = {
        get: await this.explainGet(recipient.id, seededTask),
        inbox: await this.explainStatement(
          listQuery({ caller_id: recipient.id, role: 'recipient', limit: 50, order: 'created', history_length: 0, include_artifacts: false }),
        ),
        watch: await this.explainStatement({
          text: INBOX_EVENTS_AFTER_SQL,
          values: [replay.afterPosition, recipient.handle, TASK_EVENTS_PAGE_LIMIT + 1, TASK_LIMITS.replyEventBytes],
        }),
      };
      const writes = await explainRelayWrites(this.db, this.relay.inbox, replay.pendingTaskId);
      this.inboxPlans.push({ size, seedSeconds, explain: plans.inbox, plans, writes });
      for (const [operation, plan] of Object.entries(plans))
        console.log(`\n  EXPLAIN (ANALYZE, BUFFERS) of ${operation} at ${size.toLocaleString('en-US')}:\n${indent(plan, '    ')}`);
      console.log(
        `\n  EXPLAIN (ANALYZE, BUFFERS, WAL) of the writes at ${size.toLocaleString('en-US')}, rolled back:\n${indent(writePlanLines(writes).join('\n'), '    ')}`,
      );
      const expected = Math.min(50, Math.floor(size / INBOX_SHARE));
      const calls: Array<[string, Call]> = [
        [`create-${size}`, this.createCall(relay, 'create')],
        [`get-${size}`, (index) => relayGet(relay.client, recipient, seededTask, index)],
        [`inbox-${size}`, async (index) => (await relayInbox(relay.client, recipient, index)) >= expected],
        [`watch-${size}`, () => relayInboxReplay(relay.client, recipient, replay.lastEventId, REPLAYED_EVENTS)],
      ];
      console.log('');
      // The smallest size is measured first, right after the relay started: its warm-up is a whole
      // window per operation, or JIT and cold caches would make the smallest size look the dearest.
      const warmup = (concurrency: number): WindowLimits =>
        size === smallest ? { concurrency, maxRequests: this.options.windowRequests, maxMs: this.options.windowMs } : this.warmup(concurrency);
      for (const concurrency of this.options.concurrencies) {
        for (const [, call] of calls) await runWindow(warmup(concurrency), call);
        for (let round = 0; round < this.options.rounds; round++) {
          for (const [scenario, call] of rotate(calls, round)) {
            await this.measure('relay', scenario, concurrency, round, 'request', () => runWindow(this.limits(concurrency), call));
          }
        }
      }
    }
  }

  /**
   * Where the recipient's live inbox stands (its `ready` id and the outbox position behind it), then
   * REPLAYED_EVENTS new handoffs to it: what a resume from that id replays (the newest of them, still
   * pending, is the one the writes' plans change).
   */
  private async prepareReplay(): Promise<{ lastEventId: string; afterPosition: string; pendingTaskId: string }> {
    const relay = this.target('relay');
    const { sender, recipient } = this.relay.inbox;
    const lastEventId = await relayInboxReadyId(relay.client, recipient);
    const { rows } = await this.db.query<{ position: string }>(
      `SELECT COALESCE(max("position"), 0)::text AS "position" FROM "tasks"."outbox_events" WHERE "payload"->>'recipient' = $1`,
      [recipient.handle],
    );
    let pendingTaskId = '';
    for (let i = 0; i < REPLAYED_EVENTS; i++) {
      const id = await relayCreate(relay.client, { sender, recipient }, i);
      if (!id) throw new Error('a handoff for the replay was refused');
      this.remember('relay', undefined, id);
      pendingTaskId = id;
    }
    return { lastEventId, afterPosition: rows[0].position, pendingTaskId };
  }

  /**
   * EXPLAIN (ANALYZE, BUFFERS) of one statement as the tasks service runs it, a prepared statement:
   * executed PLAN_SETTLING_RUNS times first, so that Postgres has settled on the plan it keeps for
   * it (the generic one, or custom ones), in a transaction rolled back after it.
   */
  private async explainStatement(statement: { text: string; values: unknown[] }): Promise<string> {
    const args = statement.values.map((value) => sqlLiteral(this.db, value)).join(', ');
    const execute = `EXECUTE bench_explained${args ? `(${args})` : ''}`;
    await this.db.query('BEGIN');
    try {
      await this.db.query(`PREPARE bench_explained AS ${statement.text}`);
      try {
        for (let run = 0; run < PLAN_SETTLING_RUNS; run++) await this.db.query(execute);
        const plan = await this.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${execute}`);
        return plan.rows.map((row) => row['QUERY PLAN']).join('\n');
      } finally {
        await this.db.query('ROLLBACK');
        await this.db.query('DEALLOCATE bench_explained');
      }
    } catch (error) {
      await this.db.query('ROLLBACK');
      throw error;
    }
  }

  /**
   * The EXPLAIN (ANALYZE, BUFFERS) of the statements the tasks service reads a create's chain
   * facts with, for slot 0's sender and one of its roots (what a linked create of the scenario
   * reads), and of the pair count an unlinked create reads instead: the service's own SQL, each
   * prepared and settled as explainStatement does, rolled back.
   */
  private async explainChainReads(root: { taskId: string; traceId: string }): Promise<void> {
    const { sender, recipient } = this.relay.pairs[0];
    const minuteAgo = new Date(Date.now() - 60_000);
    // The pair limit the bench gives the relay (RELAY_PAIR_HANDOFFS_PER_MINUTE in relay-bench.ts).
    const pairLimit = 100_000;
    const statements: Record<string, { text: string; values: unknown[] }> = {
      'parent and chain facts, locked (CHAIN_FACTS_SQL)': {
        text: CHAIN_FACTS_SQL,
        values: [null, sender.id, [root.taskId], recipient.id, minuteAgo, pairLimit, true],
      },
      'parent by trace and chain facts (CHAIN_FACTS_SQL)': {
        text: CHAIN_FACTS_SQL,
        values: [root.traceId, sender.id, [], recipient.id, minuteAgo, pairLimit, false],
      },
      'chain facts read again under the lock (PARENT_CHAIN_SQL)': {
        text: PARENT_CHAIN_SQL,
        values: [root.taskId, root.taskId, sender.id, recipient.id, minuteAgo, pairLimit],
      },
      'parent by trace alone (TRACE_PARENT_SQL)': { text: TRACE_PARENT_SQL, values: [root.traceId, sender.id] },
      'pair of an unlinked create (PAIR_RECENT_SQL)': { text: PAIR_RECENT_SQL, values: [sender.id, recipient.id, minuteAgo, pairLimit] },
    };
    for (const [name, statement] of Object.entries(statements)) this.chainPlans[name] = await this.explainStatement(statement);
  }

  /** The plan of the statement the tasks service's readTask runs for a `tasks/get`: its own text and values, caught on their way to Postgres. */
  private async explainGet(callerId: string, taskId: string): Promise<string> {
    const plans: string[] = [];
    const explaining = {
      query: async (config: { text: string; values?: unknown[] }) => {
        plans.push(await this.explainStatement({ text: config.text, values: config.values ?? [] }));
        return this.db.query({ text: config.text, values: config.values });
      },
    };
    await readTask(explaining as unknown as pg.Pool, { caller_id: callerId, task_id: taskId });
    return plans.join('\n\n');
  }

  /** Creates handoffs for a recipient with a webhook; measures commit (the create's reply) → receipt at the local sink. */
  async fanout(): Promise<void> {
    const relay = this.target('relay');
    const pair = this.relay.fanout;
    // The notifier learns the webhook from a directory event: wait until a first event arrives.
    const first = await relayCreate(relay.client, pair, 0);
    if (first) this.remember('relay', undefined, first);
    if (!first || !(await this.sink.waitFor([first], 30000))) console.log('  fanout: the first webhook did not arrive within 30 s');
    for (const concurrency of this.options.concurrencies) {
      for (let round = 0; round < this.options.rounds; round++) {
        const committed = new Map<string, number>();
        let startedAt = 0;
        await this.measure('relay', 'fanout', concurrency, round, 'event', async () => {
          startedAt = performance.now();
          const window = await runWindow({ concurrency, maxRequests: this.options.fanoutEvents, maxMs: this.options.windowMs }, async (index) => {
            const id = await relayCreate(relay.client, pair, index);
            if (id) {
              committed.set(id, performance.now());
              this.remember('relay', undefined, id);
            }
            return id !== undefined;
          });
          const ids = [...committed.keys()];
          await this.sink.waitFor(ids, this.options.fanoutWaitMs);
          const latenciesMs: number[] = [];
          let last = startedAt;
          for (const [id, at] of committed) {
            const received = this.sink.receivedAt(id);
            if (received === undefined) continue;
            latenciesMs.push(Math.max(0, received - at));
            last = Math.max(last, received);
          }
          const lost = ids.length - latenciesMs.length;
          const errorSamples = [...window.errorSamples, ...(lost > 0 ? [`${lost} webhooks not received within ${this.options.fanoutWaitMs} ms`] : [])];
          return {
            requests: latenciesMs.length + window.errors + lost,
            errors: window.errors + lost,
            seconds: (last - startedAt) / 1000,
            latenciesMs,
            errorSamples,
          };
        });
      }
    }
  }

  /**
   * Creates naming a parent beside the same creates naming none, in alternating rounds at every
   * concurrency, each slot's sender to its recipient as in `create`: `create-unlinked` names no
   * parent; `create-linked` names one as the AgentRelay dialect's `parent_task_id`;
   * `create-traced` names none but carries a `traceparent` in the parent's trace (the relay links
   * it by the trace id). The parents are roots that `origin` handed each slot's sender, spread over
   * many chains round-robin (ChainRoots) so that none reaches the chain budget; each linked create
   * is checked to be linked to its parent. CPU ms per create of every process, as for `create`.
   */
  async createLinked(): Promise<void> {
    const relay = this.target('relay');
    const roots = (this.chainRoots ??= new ChainRoots(relay.client, this.relay.origin, (slot) => this.relay.pairs[slot].sender));
    const calls: Array<[ChainCreate, Call]> = CHAIN_CREATES.map((kind) => [
      kind,
      async (index, slot) => {
        const pair = this.relay.pairs[slot];
        const id =
          kind === 'create-unlinked'
            ? await relayCreate(relay.client, pair, index)
            : await relayCreateLinked(relay.client, pair, await roots.next(slot), kind === 'create-linked' ? 'named' : 'trace', index);
        if (id) this.remember('relay', slot, id);
        return id !== undefined;
      },
    ]);
    for (const concurrency of this.options.concurrencies) {
      for (const [, call] of calls) {
        await roots.prepare(concurrency, this.options.warmupRequests);
        await runWindow(this.warmup(concurrency), call);
      }
      for (let round = 0; round < this.options.rounds; round++) {
        for (const [kind, call] of rotate(calls, round)) {
          await roots.prepare(concurrency, this.options.windowRequests);
          await this.measure('relay', kind, concurrency, round, 'request', () => runWindow(this.limits(concurrency), call));
          await sleep(100);
        }
      }
    }
    for (const id of roots.made) this.remember('relay', undefined, id);
    await this.explainChainReads(await roots.next(0));
    if (roots.madeDuringWindows > 0) console.log(`  ${roots.madeDuringWindows} chain roots were made during windows (a slot ran out of room)`);
  }

  /**
   * A handoff through the relay to an upstream A2A agent of the official SDK, against the SDK client
   * calling that agent directly, in alternating rounds at every concurrency. Both sides are one
   * blocking `SendMessage` of the official SDK client per request (`returnImmediately: false`),
   * answered once the task is completed, and checked to carry the upstream's answer: through the
   * relay, the sender's call on the relay's endpoint of the agent, which answers once the relay task
   * is completed with what the relay's follower read from the upstream (the edge waits on the task's
   * events, no client-side polling); directly, the same call on the upstream's own endpoint. CPU
   * per handoff of every process, and where the relay's handoffs spent their time. The scenario
   * picks the agent, and so how the relay follows its tasks: `upstream` polls it (`GetTask`),
   * `upstream-stream` reads the stream of its `SendStreamingMessage`, `upstream-push` is told by its
   * push notification when the task it polled at work has ended. With `upstream`, a third side in
   * the same rounds: the handoff floor (baselines/handoff-floor.ts), the least the relay's design
   * costs for the same handoff.
   */
  async upstream(scenario: UpstreamScenario): Promise<void> {
    const mode = UPSTREAM_MODES[scenario];
    const setup = this.upstreamSetup;
    const agent = this.relay.upstreams[mode];
    if (!setup || !agent) throw new Error(`the ${scenario} scenario needs its upstream agent, registered with the relay`);
    const idle: { before: Record<string, number>; after: Record<string, number> } = { before: {}, after: {} };
    this.upstreamIdle[mode] = idle;
    const slots = Math.max(...this.options.concurrencies);
    const senders = await Promise.all(this.relay.pairs.slice(0, slots).map((pair) => sdkClient(`${setup.relayUrl}/a2a/${agent.handle}/`, pair.sender.key)));
    const direct = await Promise.all(Array.from({ length: slots }, () => sdkClient(upstreamBaseUrl(setup.upstreamUrl, mode))));
    // The handoff floor stands in front of the polled agent: a blocking call, the least way to its answer.
    const floorUrl = mode === 'poll' ? setup.floorUrl : undefined;
    const throughFloor = floorUrl ? await Promise.all(Array.from({ length: slots }, () => sdkClient(floorUrl))) : [];
    let sent: SentHandoff[] = [];
    const throughRelay: Call = async (index, slot) => {
      const sentAt = epochMs();
      const task = await sendAndWait(senders[slot], handoffText(index, slot));
      sent.push({ taskId: task.id, sentAt, answeredAt: epochMs() });
      this.remember('relay', undefined, task.id);
      return true;
    };
    const directly: Call = async (index, slot) => {
      await sendAndWait(direct[slot], handoffText(index, slot));
      return true;
    };
    const paths: Array<[UpstreamPath, Call]> = [
      ['relay', throughRelay],
      ['direct', directly],
      ...(floorUrl
        ? [
            [
              'floor',
              async (index: number, slot: number) => {
                await sendAndWait(throughFloor[slot], handoffText(index, slot));
                return true;
              },
            ] as [UpstreamPath, Call],
          ]
        : []),
    ];
    for (const concurrency of this.options.concurrencies) {
      for (const [, call] of paths) await runWindow(this.warmup(concurrency), call);
      // What every process burns with no load (pollers, timers), once warm: the windows' CPU less this rate is what the handoffs cost.
      if (concurrency === this.options.concurrencies[0]) idle.before = await this.idleCpuMsPerSecond(this.options.idleMs);
      for (let round = 0; round < this.options.rounds; round++) {
        for (const [path, call] of rotate(paths, round)) {
          sent = [];
          const { window, usage } = await this.sampleWindow(() => runWindow(this.limits(concurrency), call));
          const counted = window.requests - window.errors;
          const cpuMsPerHandoff: Record<string, number> = {};
          const netCpuMsPerHandoff: Record<string, number> = {};
          const own = { relay: SERVER_GROUPS.relay, floor: FLOOR_PROCESSES, direct: [] }[path];
          const groups = [...own, UPSTREAM_PROCESS, ...SHARED_GROUPS];
          for (const name of groups) {
            const used = usage.get(name);
            if (!used) continue;
            cpuMsPerHandoff[name] = perRequest(used.cpuMs, counted);
            netCpuMsPerHandoff[name] = perRequest(Math.max(0, used.cpuMs - (idle.before[name] ?? 0) * window.seconds), counted);
          }
          const record: UpstreamWindow = {
            mode,
            path,
            concurrency,
            round,
            handoffs: window.requests,
            errors: window.errors,
            rps: window.seconds > 0 ? counted / window.seconds : 0,
            ...latencyFigures(window.latenciesMs),
            cpuMsPerHandoff,
            netCpuMsPerHandoff,
            ...(path === 'relay' ? { stages: await stageBreakdown(this.db, sent, (type, id) => this.events.arrivedAt(type, id)) } : {}),
          };
          this.upstreamWindows.push(record);
          const ownCpu = own.reduce((sum, name) => sum + (netCpuMsPerHandoff[name] ?? 0), 0);
          console.log(
            `  ${scenario.padEnd(16)} c=${String(concurrency).padEnd(3)} r${round + 1} ${path.padEnd(13)} ${record.rps.toFixed(0).padStart(6)}/s  p50 ${record.p50.toFixed(1)} p95 ${record.p95.toFixed(1)} ms  cpu less idle ${path !== 'direct' ? `${path} ${ownCpu.toFixed(2)} + ` : ''}upstream ${(netCpuMsPerHandoff[UPSTREAM_PROCESS] ?? NaN).toFixed(2)} ms/handoff  errors ${record.errors}`,
          );
          if (window.errorSamples.length > 0) console.log(`    errors: ${window.errorSamples.join(' | ')}`);
          await sleep(100);
        }
      }
    }
    idle.after = await this.idleCpuMsPerSecond(this.options.idleMs);
  }

  /** CPU ms per second of every process over `ms` with no load. */
  private async idleCpuMsPerSecond(ms: number): Promise<Record<string, number>> {
    const started = performance.now();
    const before = await this.sampler.sample();
    await sleep(ms);
    const usage = this.sampler.usage(before, await this.sampler.sample());
    const seconds = (performance.now() - started) / 1000;
    const rates = Object.fromEntries([...usage].map(([name, used]) => [name, used.cpuMs / seconds]));
    console.log(
      `  idle CPU ms/s over ${seconds.toFixed(1)} s: ${Object.entries(rates)
        .map(([name, rate]) => `${name} ${rate.toFixed(1)}`)
        .join(', ')}`,
    );
    return rates;
  }

  /** Postgres's autovacuum settings during the run, for the report. */
  vacuumSettings = '';

  async run(): Promise<void> {
    this.vacuumSettings = await this.growth.vacuumSettings();
    console.log(`  Postgres: ${this.vacuumSettings}`);
    const order: ScenarioName[] = [
      'create',
      'create-linked',
      'a2a-send',
      'get',
      'lifecycle',
      'inbox',
      'fanout',
      'upstream',
      'upstream-stream',
      'upstream-push',
    ];
    for (const scenario of order) {
      if (!this.options.scenarios.includes(scenario)) continue;
      console.log(`\n## ${scenario}`);
      if (scenario === 'create' || scenario === 'a2a-send' || scenario === 'get') await this.compare(scenario);
      else if (scenario === 'lifecycle') await this.lifecycle();
      else if (scenario === 'inbox') await this.inbox();
      else if (scenario === 'create-linked') await this.createLinked();
      else if (isUpstreamScenario(scenario)) await this.upstream(scenario);
      else await this.fanout();
    }
  }
}

/** One seeded task in this many is addressed to the measured recipient. */
export const INBOX_SHARE = 10;

/** The handoffs a measured live-inbox resume replays. */
export const REPLAYED_EVENTS = 5;

function lpad(id: string): string {
  return id.padStart(26, '0');
}

export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

function indent(text: string, prefix: string): string {
  return text
    .split('\n')
    .map((line) => prefix + line)
    .join('\n');
}

/** A local HTTP server on 127.0.0.1 that notes when the webhook of each task's `created` event arrives. */
export class FanoutSink {
  private readonly received = new Map<string, number>();
  private readonly waiters = new Set<() => void>();
  requests = 0;

  private constructor(private readonly server: Server) {}

  static async start(): Promise<FanoutSink> {
    const server = createServer();
    const sink = new FanoutSink(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const at = performance.now();
        sink.requests++;
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { task_id?: string } };
          const id = body.data?.task_id;
          if (id && !sink.received.has(id)) sink.received.set(id, at);
        } catch {
          // not JSON: counted, ignored
        }
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.end('ok');
        for (const wake of sink.waiters) wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  receivedAt(taskId: string): number | undefined {
    return this.received.get(taskId);
  }

  /** Resolves true once every id was received, false at the timeout. */
  async waitFor(ids: string[], timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (ids.some((id) => !this.received.has(id))) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(left, 250));
        this.waiters.add(wake);
      });
    }
    return true;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
