/**
 * The `upstream*` scenarios' parts: the official SDK client (a sender on the relay's endpoint of an
 * upstream agent, or calling the upstream agent directly), one blocking `SendMessage` per request,
 * where each relay handoff spent its time (from the relay's own rows), and the report's table.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { Role, TaskState, type Message, type SendMessageResult, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type BeforeArgs, type CallInterceptor, type Client } from '@a2a-js/sdk/client';
import type { UpstreamMode } from './options';
import { fmt, median, percentile } from './stats';

/** Where the upstream agents' process serves each agent (its card at `<base>.well-known/agent-card.json`). */
const UPSTREAM_PATHS: Record<UpstreamMode, string> = { poll: '/', stream: '/stream/', push: '/push/' };

/** The base URL of the upstream agent that answers in `mode`, in the process at `processUrl`. */
export function upstreamBaseUrl(processUrl: string, mode: UpstreamMode): string {
  return `${processUrl}${UPSTREAM_PATHS[mode]}`;
}

/** The official SDK client for the agent whose card is at `<baseUrl>/.well-known/agent-card.json`; with an API key on every call when given. */
export function sdkClient(baseUrl: string, apiKey?: string): Promise<Client> {
  const interceptors: CallInterceptor[] = apiKey
    ? [
        {
          async before(args: BeforeArgs) {
            args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, 'X-API-Key': apiKey } };
          },
          async after() {},
        },
      ]
    : [];
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory()], clientConfig: { interceptors } }),
  );
  return factory.createFromUrl(baseUrl);
}

/** The text a handoff sends, and the answer the echo agent gives it. */
export const handoffText = (index: number, slot: number): string => `bench upstream ${slot}.${index}`;
const answerOf = (text: string): string => `echo: ${text}`;

function texts(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) texts(item, into);
  else if (value && typeof value === 'object') {
    const content = (value as { content?: { $case?: string; value?: unknown } }).content;
    if (content?.$case === 'text' && typeof content.value === 'string') into.push(content.value);
    for (const [key, item] of Object.entries(value)) if (key !== 'content' && !(item instanceof Uint8Array)) texts(item, into);
  }
  return into;
}

/**
 * One blocking `SendMessage` (`returnImmediately: false`): it answers once the task is completed
 * (or another settled state); the task, checked to be completed with the upstream's answer.
 */
export async function sendAndWait(client: Client, text: string): Promise<Task> {
  const message: Message = {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId: '',
    contextId: '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
  const result: SendMessageResult = await client.sendMessage({
    tenant: '',
    message,
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: false },
    metadata: undefined,
  });
  if (!('status' in result)) throw new Error(`SendMessage answered a message, not a task`);
  const state = result.status?.state;
  if (state !== TaskState.TASK_STATE_COMPLETED)
    throw new Error(`SendMessage answered task ${result.id} in state ${state !== undefined ? TaskState[state] : 'none'}`);
  if (!texts([result.status?.message, result.history, result.artifacts]).includes(answerOf(text)))
    throw new Error(`task ${result.id} is completed without the upstream's answer "${answerOf(text)}"`);
  return result;
}

/** A handoff through the relay as the sender saw it: when it sent (epoch ms) and when the completed task came back. */
export interface SentHandoff {
  taskId: string;
  sentAt: number;
  answeredAt: number;
}

export const epochMs = (): number => performance.timeOrigin + performance.now();

/**
 * The stages of a handoff through the relay, from the relay's own rows (the time each write
 * stamped) and the bench's subscription to the task events (when each reached the stream), on the
 * machine's one clock as the sender's times: the sender's request → the task written (edge,
 * tasks service) → its `created` event on the stream (the outbox relay) → the upstream delivery
 * recorded (the notifier's event consumer) → its attempt started (the delivery worker) → the
 * upstream answered `SendMessage` and the answer was recorded as a follow → the upstream's answer written as the
 * relay task's completion (the follower's `GetTask` and the tasks service's transitions) → its
 * event on the stream → the blocking send answered (the edge woken by the event, re-reading the
 * task). A tasks service row's time is that service's clock as it builds the statement that
 * writes it (its outbox event's `created_at` too), so the stage ending in it includes neither that
 * statement nor its commit and the stage after it includes both: "written", not committed. A
 * notifier row's time is its transaction's start (`now()`). No row holds when a commit ended.
 */
export const UPSTREAM_STAGES = [
  ['request → task written', 'written', 'sent'],
  ['written → created event on the stream (statement, commit, publish)', 'created_published', 'written'],
  ['on the stream → upstream delivery recorded', 'delivery_recorded', 'created_published'],
  ['recorded → attempt started', 'attempt_started', 'delivery_recorded'],
  ['attempt: upstream SendMessage, answer recorded as a follow', 'follow_recorded', 'attempt_started'],
  ['follow recorded → completion written', 'completion_written', 'follow_recorded'],
  ['completion written → its event on the stream (statement, commit, publishes)', 'completed_published', 'completion_written'],
  ['on the stream → sender answered', 'answered', 'completed_published'],
] as const;

type StageTimes = Record<(typeof UPSTREAM_STAGES)[number][1 | 2], number>;

export interface StageBreakdown {
  /** Median ms of each stage over the window's handoffs, in UPSTREAM_STAGES order. */
  medianMs: number[];
  /** How many `GetTask` polls of the upstream a handoff took (median, and the largest). */
  polls: { median: number; max: number };
  handoffs: number;
}

/** When a task's event reached the stream (epoch ms), as the bench's subscription saw it. */
export type ArrivedAt = (type: 'created' | 'completed', taskId: string) => number | undefined;

/** Where the window's handoffs spent their time (medians per stage). */
export async function stageBreakdown(db: pg.Client, handoffs: readonly SentHandoff[], arrivedAt: ArrivedAt): Promise<StageBreakdown> {
  const { rows } = await db.query<{
    id: string;
    written: number;
    delivery_recorded: number | null;
    attempt_started: number | null;
    follow_recorded: number | null;
    completion_written: number | null;
    polls: number | null;
  }>(
    `SELECT t."id",
            extract(epoch FROM t."created_at") * 1000 AS "written",
            extract(epoch FROM d."created_at") * 1000 AS "delivery_recorded",
            extract(epoch FROM a."attempted_at") * 1000 AS "attempt_started",
            extract(epoch FROM u."created_at") * 1000 AS "follow_recorded",
            extract(epoch FROM completed."created_at") * 1000 AS "completion_written",
            u."polls"
       FROM "tasks"."tasks" t
       LEFT JOIN "tasks"."outbox_events" completed ON completed."task_id" = t."id" AND completed."type" = 'completed'
       LEFT JOIN "notifier"."deliveries" d ON d."task_id" = t."id" AND d."channel" = 'upstream' AND d."event" = 'a2a.task.created'
       LEFT JOIN "notifier"."delivery_attempts" a ON a."delivery_id" = d."id" AND a."attempt_no" = 1
       LEFT JOIN "notifier"."upstream_tasks" u ON u."task_id" = t."id"
      WHERE t."id" = ANY($1::text[])`,
    [handoffs.map((handoff) => handoff.taskId)],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  const durations: number[][] = UPSTREAM_STAGES.map(() => []);
  const polls: number[] = [];
  for (const handoff of handoffs) {
    const row = byId.get(handoff.taskId);
    if (!row) continue;
    const times: Partial<StageTimes> = {
      sent: handoff.sentAt,
      answered: handoff.answeredAt,
      created_published: arrivedAt('created', handoff.taskId),
      completed_published: arrivedAt('completed', handoff.taskId),
    };
    for (const key of ['written', 'delivery_recorded', 'attempt_started', 'follow_recorded', 'completion_written'] as const) {
      const value = row[key];
      if (value !== null) times[key] = Number(value);
    }
    UPSTREAM_STAGES.forEach(([, to, from], stage) => {
      const end = times[to];
      const start = times[from];
      if (end !== undefined && start !== undefined) durations[stage].push(end - start);
    });
    if (row.polls !== null) polls.push(row.polls);
  }
  return {
    medianMs: durations.map((values) => median(values)),
    polls: { median: median(polls), max: polls.length ? Math.max(...polls) : NaN },
    handoffs: rows.length,
  };
}

export type UpstreamPath = 'relay' | 'direct' | 'floor';

/** One window of the scenario, one side: latency figures from the raw latencies, CPU ms per handoff per process. */
export interface UpstreamWindow {
  /** How the upstream agent answers (poll: the relay polls it, stream: it streams, push: it pushes). */
  mode: UpstreamMode;
  /** Through the relay, to the agent directly, or through the handoff floor (`upstream` only). */
  path: UpstreamPath;
  concurrency: number;
  round: number;
  handoffs: number;
  errors: number;
  rps: number;
  p50: number;
  p95: number;
  cpuMsPerHandoff: Record<string, number>;
  /** The same less what the process burns with no load (its idle CPU ms per second × the window's seconds), at least 0. */
  netCpuMsPerHandoff: Record<string, number>;
  /** The relay side: where its handoffs spent their time. */
  stages?: StageBreakdown;
}

export function latencyFigures(latenciesMs: readonly number[]): { p50: number; p95: number } {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

/** The relay's own processes (what it adds), summed in the table's "relay" column. */
export const RELAY_PROCESSES = ['edge', 'tasks', 'directory', 'notifier', 'nats-server', 'pg-relay'] as const;
/** The upstream agent's process. */
export const UPSTREAM_PROCESS = 'sdk-upstream';
/** The handoff floor's own processes (scripts/bench/baselines/handoff-floor.ts), summed as the relay's are: its three, NATS and its Postgres backends. */
export const FLOOR_PROCESSES = ['floor-edge', 'floor-tasks', 'floor-notifier', 'nats-server', 'pg-handoff-floor'] as const;

export interface UpstreamRow {
  mode: UpstreamMode;
  concurrency: number;
  rounds: number;
  relay: { p50: number; p95: number; rps: number; errors: number };
  direct: { p50: number; p95: number; rps: number; errors: number };
  /** Median over rounds of (relay p50 − direct p50) of the same round. */
  addedP50: number;
  /** CPU ms per handoff through the relay, per process, less idle (medians over rounds). */
  relayCpu: Record<string, number>;
  /** The relay's own processes summed, less idle (median over rounds of the per-round sums). */
  relayAddedCpu: number;
  /** The same with the idle CPU left in. */
  relayAddedCpuWithIdle: number;
  /** The upstream agent's CPU ms per handoff when called directly, less idle. */
  upstreamDirectCpu: number;
  /** Median stage durations of the relay side over rounds. */
  stagesMs: number[];
  polls: { median: number; max: number };
  /** The handoff floor in the same rounds, when it ran. */
  floor?: {
    p50: number;
    p95: number;
    rps: number;
    errors: number;
    /** Median over rounds of (floor p50 − direct p50) of the same round. */
    addedP50: number;
    /** CPU ms per handoff per process, less idle (medians over rounds). */
    cpu: Record<string, number>;
    /** Its own processes summed, less idle (median over rounds of the per-round sums). */
    ownCpu: number;
  };
}

export function summarizeUpstream(windows: readonly UpstreamWindow[]): UpstreamRow[] {
  const rows: UpstreamRow[] = [];
  for (const mode of [...new Set(windows.map((window) => window.mode))])
    for (const concurrency of [...new Set(windows.map((window) => window.concurrency))].sort((a, b) => a - b)) {
      const at = windows.filter((window) => window.mode === mode && window.concurrency === concurrency);
      if (at.length === 0) continue;
      const relay = at.filter((window) => window.path === 'relay');
      const direct = at.filter((window) => window.path === 'direct');
      const floor = at.filter((window) => window.path === 'floor');
      const side = (of: UpstreamWindow[]) => ({
        p50: median(of.map((window) => window.p50)),
        p95: median(of.map((window) => window.p95)),
        rps: median(of.map((window) => window.rps)),
        errors: of.reduce((sum, window) => sum + window.errors, 0),
      });
      const addedOver = (of: UpstreamWindow[]): number[] =>
        of.flatMap((window) => {
          const same = direct.find((other) => other.round === window.round);
          return same ? [window.p50 - same.p50] : [];
        });
      const perProcess = (of: UpstreamWindow[]): Record<string, number> => {
        const processes = [...new Set(of.flatMap((window) => Object.keys(window.netCpuMsPerHandoff)))];
        return Object.fromEntries(processes.map((name) => [name, median(of.map((window) => window.netCpuMsPerHandoff[name] ?? NaN))]));
      };
      const sumOf = (names: readonly string[]) => (of: Record<string, number>) => names.reduce((sum, name) => sum + (of[name] ?? 0), 0);
      const ownSum = sumOf(RELAY_PROCESSES);
      rows.push({
        mode,
        concurrency,
        rounds: relay.length,
        relay: side(relay),
        direct: side(direct),
        addedP50: median(addedOver(relay)),
        relayCpu: perProcess(relay),
        relayAddedCpu: median(relay.map((window) => ownSum(window.netCpuMsPerHandoff))),
        relayAddedCpuWithIdle: median(relay.map((window) => ownSum(window.cpuMsPerHandoff))),
        upstreamDirectCpu: median(direct.map((window) => window.netCpuMsPerHandoff[UPSTREAM_PROCESS] ?? NaN)),
        stagesMs: UPSTREAM_STAGES.map((_, stage) => median(relay.flatMap((window) => (window.stages ? [window.stages.medianMs[stage]] : [])))),
        polls: {
          median: median(relay.flatMap((window) => (window.stages ? [window.stages.polls.median] : []))),
          max: Math.max(...relay.map((window) => window.stages?.polls.max ?? NaN).filter(Number.isFinite)),
        },
        ...(floor.length > 0
          ? {
              floor: {
                ...side(floor),
                addedP50: median(addedOver(floor)),
                cpu: perProcess(floor),
                ownCpu: median(floor.map((window) => sumOf(FLOOR_PROCESSES)(window.netCpuMsPerHandoff))),
              },
            }
          : {}),
      });
    }
  return rows;
}

/** The scenario's tables: latency of each path, CPU ms per handoff per process, and where the relay's handoffs spent their time. */
export function upstreamTables(rows: readonly UpstreamRow[], idle: { before: Record<string, number>; after: Record<string, number> }): string {
  const rates = (of: Record<string, number>): string =>
    Object.entries(of)
      .map(([name, rate]) => `${name} ${fmt(rate, 1)}`)
      .join(', ');
  const latency = [
    '| c | rounds | relay p50 ms | relay p95 ms | direct p50 ms | direct p95 ms | added p50 ms (relay − direct) | relay handoffs/s | direct handoffs/s | errors relay / direct |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.concurrency} | ${row.rounds} | ${fmt(row.relay.p50)} | ${fmt(row.relay.p95)} | ${fmt(row.direct.p50)} | ${fmt(row.direct.p95)} | ${fmt(row.addedP50)} | ${fmt(row.relay.rps, 0)} | ${fmt(row.direct.rps, 0)} | ${row.relay.errors} / ${row.direct.errors} |`,
    ),
  ];
  const columns = [...RELAY_PROCESSES, UPSTREAM_PROCESS];
  const cpu = [
    `| c | ${columns.join(' | ')} | relay's own (sum) | with idle | upstream direct | relay's own ÷ upstream direct |`,
    `|---:|${columns.map(() => '---:').join('|')}|---:|---:|---:|---:|`,
    ...rows.map(
      (row) =>
        `| ${row.concurrency} | ${columns.map((name) => fmt(row.relayCpu[name], 2)).join(' | ')} | **${fmt(row.relayAddedCpu, 2)}** | ${fmt(row.relayAddedCpuWithIdle, 2)} | **${fmt(row.upstreamDirectCpu, 2)}** | ${fmt(row.relayAddedCpu / row.upstreamDirectCpu, 2)}× |`,
    ),
  ];
  const floorRows = rows.filter((row) => row.floor);
  const floorColumns = [...FLOOR_PROCESSES, UPSTREAM_PROCESS];
  const floor = [
    `| c | floor p50 ms | floor added p50 ms (floor − direct) | floor handoffs/s | errors | ${floorColumns.join(' | ')} | floor's own (sum) | relay's own ÷ floor's own | relay's added p50 ÷ floor's |`,
    `|---:|---:|---:|---:|---:|${floorColumns.map(() => '---:').join('|')}|---:|---:|---:|`,
    ...floorRows.map((row) => {
      const of = row.floor!;
      return `| ${row.concurrency} | ${fmt(of.p50)} | ${fmt(of.addedP50)} | ${fmt(of.rps, 0)} | ${of.errors} | ${floorColumns.map((name) => fmt(of.cpu[name], 2)).join(' | ')} | **${fmt(of.ownCpu, 2)}** | ${fmt(row.relayAddedCpu / of.ownCpu, 2)}× | ${fmt(row.addedP50 / of.addedP50, 2)}× |`;
    }),
  ];
  const stages = [
    `| stage | ${rows.map((row) => `c=${row.concurrency} ms`).join(' | ')} |`,
    `|---|${rows.map(() => '---:').join('|')}|`,
    ...UPSTREAM_STAGES.map(([label], stage) => `| ${label} | ${rows.map((row) => fmt(row.stagesMs[stage])).join(' | ')} |`),
    `| GetTask polls per handoff (median / max) | ${rows.map((row) => `${fmt(row.polls.median, 0)} / ${fmt(row.polls.max, 0)}`).join(' | ')} |`,
  ];
  return [
    "Latency (the sender's blocking `SendMessage` until the task is completed with the answer; medians over rounds):",
    '',
    ...latency,
    '',
    "CPU ms per handoff through the relay, per process, less what each burns with no load (the upstream agent's included, apart from the relay's own sum; \"with idle\": the sum as measured), and the upstream agent's own per handoff called directly, less idle:",
    '',
    `Idle CPU ms per second, after the first warm-up: ${rates(idle.before)}; after the last window: ${rates(idle.after)}.`,
    '',
    ...cpu,
    '',
    ...(floorRows.length > 0
      ? [
          "The handoff floor (scripts/bench/baselines/handoff-floor.ts), in the same rounds: the least a handoff costs in the relay's design, three processes with no framework, two statements, two events, one blocking `SendMessage` to the same agent; CPU ms per handoff less idle:",
          '',
          ...floor,
          '',
        ]
      : []),
    "Where a handoff through the relay spends its time (median per stage, medians over rounds; from the relay's rows):",
    '',
    ...stages,
  ].join('\n');
}
