/**
 * The `replicas` scenario: creates through one edge with one tasks service, then through two edges
 * (requests alternating) with two tasks services, reporting req/s and CPU ms per request of every
 * process, the second replicas apart. Before each load it also measures every process idle, so
 * that what a replica costs while doing nothing (polling, the standby outbox relay) shows apart
 * from the cost per request.
 */
import type { BenchOptions } from './options';
import { HttpClient, runWindow, sleep, type Call, type WindowLimits } from './load-generator';
import type { PgProcesses } from './pg-processes';
import { ProcessSampler, type ProcessGroup } from './proc-sampler';
import { startRelayProcess, waitForHttp, type Child, type RelayEnvOf, type RelayService } from './processes';
import { relayCreate, type RelayFixture } from './relay-fixture';
import { perRequest, summarizeLatencies, type LatencySummary } from './stats';

/** The processes measured, in table order; `edge-2` and `tasks-2` run in the two-replica half only. */
const PROCESSES = ['edge-1', 'edge-2', 'tasks-1', 'tasks-2', 'directory', 'notifier', 'nats-server', 'pg-relay'] as const;
type ProcessName = (typeof PROCESSES)[number];

const IDLE_MS = 5000;
/** After the second replicas answer, before their idle window: their start-up work (JIT, first connections) is not idle cost. */
const SETTLE_MS = 5000;

export interface ReplicasRecord {
  replicas: 1 | 2;
  concurrency: number;
  round: number;
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  latencyMs: LatencySummary;
  cpuMsPerRequest: Partial<Record<ProcessName, number>>;
  totalCpuMsPerRequest: number;
}

export interface ReplicasIdle {
  replicas: 1 | 2;
  /** CPU ms per second of each process with no load at all. */
  cpuMsPerSecond: Partial<Record<ProcessName, number>>;
}

export interface ReplicasResult {
  records: ReplicasRecord[];
  idle: ReplicasIdle[];
  table: string;
}

export interface ReplicasContext {
  options: BenchOptions;
  /** The relay's processes as started (one of each), and the environment they were started with. */
  relay: Map<RelayService, Child>;
  relayEnv: Record<string, string>;
  /** What each process got beside relayEnv (its own NATS seed with `--nats secure`): the second replicas get their role's. */
  relayEnvOf: RelayEnvOf;
  /** Every child of the run: the second replicas are added, so the run's cleanup stops them. */
  children: Child[];
  fixture: RelayFixture;
  natsPids: number[];
  postgres: PgProcesses;
}

function fmt(value: number | undefined): string {
  return value === undefined || !Number.isFinite(value) ? '' : value.toFixed(2);
}

export async function replicasScenario(context: ReplicasContext): Promise<ReplicasResult> {
  const { options, relay, relayEnv, relayEnvOf, children, fixture, natsPids, postgres } = context;
  const second = new Map<'edge' | 'tasks', Child>();
  const pidOf = (child: Child | undefined): number[] => (child?.process.pid !== undefined && child.process.exitCode === null ? [child.process.pid] : []);
  const groups: ProcessGroup[] = [
    { name: 'edge-1', pids: () => pidOf(relay.get('edge')) },
    { name: 'edge-2', pids: () => pidOf(second.get('edge')) },
    { name: 'tasks-1', pids: () => pidOf(relay.get('tasks')) },
    { name: 'tasks-2', pids: () => pidOf(second.get('tasks')) },
    { name: 'directory', pids: () => pidOf(relay.get('directory')) },
    { name: 'notifier', pids: () => pidOf(relay.get('notifier')) },
    { name: 'nats-server', pids: () => natsPids },
    { name: 'pg-relay', pids: postgres.backends(undefined) },
  ];
  const sampler = new ProcessSampler(groups, () => postgres.refresh());
  const records: ReplicasRecord[] = [];
  const idle: ReplicasIdle[] = [];
  const edges = [new HttpClient(relayEnv.RELAY_PUBLIC_URL)];
  try {
    for (const replicas of [1, 2] as const) {
      if (replicas === 2) {
        const edgePort = options.port + 10;
        second.set('tasks', startRelayProcess('tasks', relayEnv, 'tasks-2', relayEnvOf('tasks')));
        second.set('edge', startRelayProcess('edge', { ...relayEnv, EDGE_PORT: String(edgePort) }, 'edge-2', relayEnvOf('edge')));
        children.push(...second.values());
        edges.push(new HttpClient(`http://127.0.0.1:${edgePort}`));
        await waitForHttp(edges[1], '/readyz', [...second.values()], 120_000);
        await sleep(SETTLE_MS);
      }
      idle.push({ replicas, cpuMsPerSecond: await idleCpu(sampler) });
      console.log(`  replicas=${replicas} idle CPU ms/s: ${PROCESSES.map((name) => `${name} ${fmt(idle.at(-1)!.cpuMsPerSecond[name])}`).join(', ')}`);
      // Requests alternate over the edges (by request, so one client uses both too).
      const call: Call = async (index, slot) => (await relayCreate(edges[index % edges.length], fixture.pairs[slot], index)) !== undefined;
      for (const concurrency of options.concurrencies) {
        await runWindow({ concurrency: Math.min(concurrency, 4), maxRequests: options.warmupRequests, maxMs: options.warmupMs }, call);
        for (let round = 0; round < options.rounds; round++) {
          const limits: WindowLimits = {
            concurrency,
            maxRequests: options.windowRequests,
            maxMs: options.windowMs,
            minRequests: Math.min(options.windowMinRequests, options.windowRequests),
            hardMaxMs: options.windowMs * 5,
          };
          const before = await sampler.sample();
          const window = await runWindow(limits, call);
          const usage = sampler.usage(before, await sampler.sample());
          const counted = window.requests - window.errors;
          const cpuMsPerRequest: Partial<Record<ProcessName, number>> = {};
          let total = 0;
          for (const name of PROCESSES) {
            const used = usage.get(name);
            if (!used || used.pids.length === 0) continue;
            cpuMsPerRequest[name] = perRequest(used.cpuMs, counted);
            total += used.cpuMs;
          }
          const record: ReplicasRecord = {
            replicas,
            concurrency,
            round,
            requests: window.requests,
            errors: window.errors,
            seconds: window.seconds,
            rps: window.seconds > 0 ? counted / window.seconds : 0,
            latencyMs: summarizeLatencies(window.latenciesMs),
            cpuMsPerRequest,
            totalCpuMsPerRequest: perRequest(total, counted),
          };
          records.push(record);
          console.log(
            `  replicas=${replicas} c=${String(concurrency).padEnd(3)} r${round + 1} ${record.rps.toFixed(0).padStart(6)}/s  p50 ${record.latencyMs.p50.toFixed(1)} p99 ${record.latencyMs.p99.toFixed(1)} ms  cpu ${fmt(record.totalCpuMsPerRequest)} ms/request  errors ${record.errors}`,
          );
          if (window.errorSamples.length > 0) console.log(`    errors: ${window.errorSamples.join(' | ')}`);
          await sleep(100);
        }
      }
    }
  } finally {
    for (const client of edges) client.close();
  }
  return { records, idle, table: replicasTable(records, idle) };
}

/** CPU ms per second of every process over a window without load. */
async function idleCpu(sampler: ProcessSampler): Promise<Partial<Record<ProcessName, number>>> {
  const before = await sampler.sample();
  const started = Date.now();
  await sleep(IDLE_MS);
  const usage = sampler.usage(before, await sampler.sample());
  const seconds = (Date.now() - started) / 1000;
  const result: Partial<Record<ProcessName, number>> = {};
  for (const name of PROCESSES) {
    const used = usage.get(name);
    if (used && used.pids.length > 0) result[name] = used.cpuMs / seconds;
  }
  return result;
}

function median(values: number[]): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Medians over rounds per replica count and concurrency: req/s, then CPU ms per request of each process; idle rows in CPU ms per second. */
export function replicasTable(records: readonly ReplicasRecord[], idle: readonly ReplicasIdle[]): string {
  const lines = [`| replicas | c | req/s | p99 ms | ${PROCESSES.join(' | ')} | total |`, `|---:|---:|---:|---:|${PROCESSES.map(() => '---:').join('|')}|---:|`];
  const keys = [...new Set(records.map((record) => `${record.replicas}:${record.concurrency}`))];
  for (const key of keys) {
    const rounds = records.filter((record) => `${record.replicas}:${record.concurrency}` === key);
    const cells = PROCESSES.map((name) => {
      const values = rounds.map((record) => record.cpuMsPerRequest[name]).filter((value): value is number => value !== undefined);
      return values.length ? fmt(median(values)) : '';
    });
    const [replicas, concurrency] = key.split(':');
    lines.push(
      `| ${replicas} | ${concurrency} | ${median(rounds.map((record) => record.rps)).toFixed(0)} | ${median(rounds.map((record) => record.latencyMs.p99)).toFixed(1)} | ${cells.join(' | ')} | **${fmt(median(rounds.map((record) => record.totalCpuMsPerRequest)))}** |`,
    );
  }
  for (const row of idle) {
    lines.push(`| ${row.replicas}, idle (CPU ms/s) | – | – | – | ${PROCESSES.map((name) => fmt(row.cpuMsPerSecond[name])).join(' | ')} | |`);
  }
  return lines.join('\n');
}
