/**
 * What the RPC layer costs a service per request: the server-side CPU of one trivial request-reply
 * handler (a GetTask-like lookup, a ~1 KB task in the reply) behind four servers, each started as
 * its own child process (this script with `--serve`, the servers in `rpc-layer-servers.ts`) on the
 * real NATS with its own subject prefix:
 *
 *   nest-relay              the relay's stack: a Nest microservice on RelayNatsServer with the global
 *                           pipe, exception filter and interceptor of startRelayMicroservice; the
 *                           payload is the GetRequest contract class, so the pipe validates it
 *   nest-relay-unvalidated  the same, its payload a plain type (the pipe passes it through)
 *   nest-plain              a Nest microservice on Nest's own ServerNats, no pipe, filter or interceptor
 *   nats-map                a typed handler map on nats.js: subscribe, JSON decode, handler, JSON encode, respond
 *
 * One client (this process, the edge's NatsRpcClient) drives each server in a closed loop at each
 * concurrency; servers alternate in an order that rotates each round, each round in a fresh child.
 * Per window: the server process's CPU (utime + stime of /proc/<pid>/stat) per request, the NATS
 * server's and this client's, and the client's p50/p99 latency. Linux only.
 *
 *   npx tsc -p tsconfig.build.json && npx tsc-alias -p tsconfig.build.json
 *   node dist/scripts/bench/rpc-layer-cost.js [--requests 20000] [--rounds 3] [--concurrency 1,32] [--servers a,b]
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { RelayError, TASKS_SUBJECTS } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { runWindow, sleep } from './load-generator';
import { pidsByCommand, ProcessSampler } from './proc-sampler';
import { DIST, stopChildren, type Child } from './processes';
import { MISSING_TASK_ID, RPC_SERVERS, serveRpcBench, type RpcServerName } from './rpc-layer-servers';
import { median, medianOfRoundDifferences, perRequest, summarizeLatencies, type LatencySummary } from './stats';

interface Options {
  requests: number;
  warmupRequests: number;
  rounds: number;
  concurrencies: number[];
  servers: RpcServerName[];
  /** The tasks service's CPU µs per GetTask at each concurrency, to express the differences as its share. */
  serviceCpuUs: Map<number, number>;
  natsUrl: string;
  resultsDir: string;
}

/** The tasks service's CPU per `get` in the last full bench (its `tasks` column): ~0.35 ms at c = 1, ~0.21 ms at c = 32. */
const DEFAULT_SERVICE_CPU_US = '1=350,32=210';

const HELP = `node dist/scripts/bench/rpc-layer-cost.js [options]

  --requests 20000        requests per measured window
  --warmup 3000           unmeasured requests (c = 8) after each server starts
  --rounds 3              rounds; each runs every server once, in a rotating order
  --concurrency 1,32      closed-loop clients
  --servers a,b           subset of ${RPC_SERVERS.join(',')}
  --service-cpu-us ${DEFAULT_SERVICE_CPU_US}  a real GetTask's tasks-service CPU µs per concurrency (the share column)
  --results DIR           where the JSON goes (bench/results)
NATS_URL (nats://127.0.0.1:4222); BENCH_NATS_PID picks the nats-server to sample.`;

function parseOptions(argv: string[]): Options {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--help' || argv[i] === '-h') {
      console.log(HELP);
      process.exit(0);
    }
    const [key, inline] = argv[i].replace(/^--/, '').split('=', 2);
    flags.set(key, inline ?? argv[++i] ?? '');
  }
  for (const key of flags.keys())
    if (!['requests', 'warmup', 'rounds', 'concurrency', 'servers', 'service-cpu-us', 'results'].includes(key))
      throw new Error(`unknown flag --${key}\n\n${HELP}`);
  const positive = (flag: string, fallback: number): number => {
    const value = Number(flags.get(flag) ?? fallback);
    if (!Number.isInteger(value) || value <= 0) throw new Error(`--${flag} must be a positive integer`);
    return value;
  };
  const servers = (flags.get('servers')?.split(',') ?? [...RPC_SERVERS]) as RpcServerName[];
  for (const server of servers) if (!RPC_SERVERS.includes(server)) throw new Error(`unknown server "${server}" (one of ${RPC_SERVERS.join(', ')})`);
  const serviceCpuUs = new Map(
    (flags.get('service-cpu-us') ?? DEFAULT_SERVICE_CPU_US).split(',').map((pair) => pair.split('=').map(Number) as [number, number]),
  );
  return {
    requests: positive('requests', 20_000),
    warmupRequests: positive('warmup', 3000),
    rounds: positive('rounds', 3),
    concurrencies: (flags.get('concurrency') ?? '1,32').split(',').map(Number),
    servers,
    serviceCpuUs,
    natsUrl: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
    resultsDir: flags.get('results') ?? 'bench/results',
  };
}

/** The nats-server behind NATS_URL: BENCH_NATS_PID, else the one whose command line names its port, else every nats-server. */
function natsServerPids(natsUrl: string): number[] {
  if (process.env.BENCH_NATS_PID) return [Number(process.env.BENCH_NATS_PID)];
  const port = new URL(natsUrl.split(',')[0]).port || '4222';
  const all = pidsByCommand('nats-server');
  const named = all.filter((pid) => {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return args.some((arg, index) => arg === `--port=${port}` || ((arg === '-p' || arg === '--port') && args[index + 1] === port));
  });
  return named.length > 0 ? named : all;
}

function startServer(server: RpcServerName, prefix: string): { child: Child; ready: Promise<void> } {
  const process_ = spawn(process.execPath, [join(DIST, 'scripts', 'bench', 'rpc-layer-cost.js'), '--serve', server, prefix], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  const child: Child = { name: server, process: process_, stderrTail: [] };
  process_.stderr?.on('data', (chunk: Buffer) => {
    child.stderrTail.push(chunk.toString('utf8'));
    if (child.stderrTail.length > 20) child.stderrTail.shift();
  });
  const ready = new Promise<void>((resolve, reject) => {
    process_.once('message', () => resolve());
    process_.once('exit', (code) => reject(new Error(`${server} exited (${code}): ${child.stderrTail.join('').slice(-800)}`)));
  });
  return { child, ready };
}

/** Asks for the unknown task until the server answers (its subscription may reach NATS after it said ready); its error, as the client reads it. */
async function errorReplyOf(client: NatsRpcClient): Promise<{ reason: string; message: string; data?: Record<string, unknown> }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await client.request(TASKS_SUBJECTS.get, { caller_id: 'agt_bench', task_id: MISSING_TASK_ID }, 2000);
      throw new Error('the unknown task was answered');
    } catch (error) {
      if (!(error instanceof RelayError)) throw error;
      const unanswered = error.reason === 'service_unavailable' && error.message.includes('no responders');
      if (!unanswered) return { reason: error.reason, message: error.message, ...(error.data ? { data: error.data } : {}) };
      if (Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

interface WindowRecord {
  server: RpcServerName;
  round: number;
  concurrency: number;
  requests: number;
  errors: number;
  seconds: number;
  latencyMs: LatencySummary;
  cpuUsPerRequest: { server: number; natsServer: number; client: number };
}

async function measure(client: NatsRpcClient, concurrency: number, requests: number, sampler?: ProcessSampler) {
  const before = await sampler?.sample();
  const result = await runWindow({ concurrency, maxRequests: requests, maxMs: 600_000 }, async (index, slot) => {
    const taskId = `task-${slot}-${index}`;
    const task = await client.request(TASKS_SUBJECTS.get, { caller_id: 'agt_bench', task_id: taskId });
    return task.id === taskId;
  });
  const usage = before && sampler ? sampler.usage(before, await sampler.sample()) : undefined;
  return { result, usage };
}

async function runServer(
  options: Options,
  server: RpcServerName,
  round: number,
  natsPids: number[],
): Promise<{ windows: WindowRecord[]; errorReply: unknown }> {
  const prefix = `rpcbench_${randomBytes(4).toString('hex')}_${server.replaceAll('-', '_')}`;
  const { child, ready } = startServer(server, prefix);
  const client = await NatsRpcClient.connect({ url: options.natsUrl, subjectPrefix: prefix, defaultTimeoutMs: 15_000, name: `rpc-bench-client-${server}` });
  try {
    await ready;
    const errorReply = await errorReplyOf(client);
    const pid = child.process.pid!;
    const sampler = new ProcessSampler([
      { name: 'server', pids: () => [pid] },
      { name: 'nats-server', pids: () => natsPids },
      { name: 'client', pids: () => [process.pid] },
    ]);
    await measure(client, 8, options.warmupRequests);
    const windows: WindowRecord[] = [];
    for (const concurrency of options.concurrencies) {
      const { result, usage } = await measure(client, concurrency, options.requests, sampler);
      const ok = result.requests - result.errors;
      const us = (group: string): number => perRequest((usage?.get(group)?.cpuMs ?? NaN) * 1000, ok);
      const record: WindowRecord = {
        server,
        round,
        concurrency,
        requests: result.requests,
        errors: result.errors,
        seconds: result.seconds,
        latencyMs: summarizeLatencies(result.latenciesMs),
        cpuUsPerRequest: { server: us('server'), natsServer: us('nats-server'), client: us('client') },
      };
      windows.push(record);
      console.log(
        `round ${round + 1} ${server.padEnd(22)} c=${String(concurrency).padEnd(3)} ${Math.round(ok / result.seconds)} req/s  server ${record.cpuUsPerRequest.server.toFixed(0)} µs/req  ` +
          `NATS ${record.cpuUsPerRequest.natsServer.toFixed(0)}  client ${record.cpuUsPerRequest.client.toFixed(0)}  p50 ${record.latencyMs.p50.toFixed(2)} ms  p99 ${record.latencyMs.p99.toFixed(2)} ms` +
          (result.errors ? `  ${result.errors} errors (${result.errorSamples.join('; ')})` : ''),
      );
    }
    return { windows, errorReply };
  } finally {
    await client.drain();
    await stopChildren([child]);
  }
}

interface SummaryRow {
  server: RpcServerName;
  concurrency: number;
  serverUs: number;
  /** Median over the rounds of (this server − nats-map), each round's pair measured in that round. */
  overNatsMapUs: number;
  /** overNatsMapUs as a share of a real GetTask's tasks-service CPU at this concurrency. */
  shareOfServiceCpu: number;
  natsServerUs: number;
  clientUs: number;
  p50Ms: number;
  p99Ms: number;
  rps: number;
  errors: number;
}

function summarize(options: Options, windows: WindowRecord[]): SummaryRow[] {
  const rows: SummaryRow[] = [];
  for (const concurrency of options.concurrencies) {
    const perRound = (server: RpcServerName, pick: (record: WindowRecord) => number): Array<number | undefined> =>
      Array.from({ length: options.rounds }, (_, round) => {
        const record = windows.find((w) => w.server === server && w.round === round && w.concurrency === concurrency);
        return record && pick(record);
      });
    for (const server of options.servers) {
      const mine = windows.filter((w) => w.server === server && w.concurrency === concurrency);
      const overNatsMapUs = options.servers.includes('nats-map')
        ? medianOfRoundDifferences(
            perRound(server, (w) => w.cpuUsPerRequest.server),
            perRound('nats-map', (w) => w.cpuUsPerRequest.server),
          ).median
        : NaN;
      rows.push({
        server,
        concurrency,
        serverUs: median(mine.map((w) => w.cpuUsPerRequest.server)),
        overNatsMapUs,
        shareOfServiceCpu: overNatsMapUs / (options.serviceCpuUs.get(concurrency) ?? NaN),
        natsServerUs: median(mine.map((w) => w.cpuUsPerRequest.natsServer)),
        clientUs: median(mine.map((w) => w.cpuUsPerRequest.client)),
        p50Ms: median(mine.map((w) => w.latencyMs.p50)),
        p99Ms: median(mine.map((w) => w.latencyMs.p99)),
        rps: median(mine.map((w) => (w.requests - w.errors) / w.seconds)),
        errors: mine.reduce((sum, w) => sum + w.errors, 0),
      });
    }
  }
  return rows;
}

function table(rows: SummaryRow[]): string {
  const fixed = (value: number, digits = 0): string => (Number.isFinite(value) ? value.toFixed(digits) : '');
  const lines = [
    '| server | c | server CPU µs/req | − nats-map µs/req | share of a GetTask | NATS server µs/req | client µs/req | p50 ms | p99 ms | req/s | errors |',
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const row of rows)
    lines.push(
      `| ${row.server} | ${row.concurrency} | ${fixed(row.serverUs)} | ${fixed(row.overNatsMapUs)} | ${Number.isFinite(row.shareOfServiceCpu) ? `${(row.shareOfServiceCpu * 100).toFixed(0)} %` : ''} | ` +
        `${fixed(row.natsServerUs)} | ${fixed(row.clientUs)} | ${fixed(row.p50Ms, 2)} | ${fixed(row.p99Ms, 2)} | ${fixed(row.rps)} | ${row.errors} |`,
    );
  return lines.join('\n');
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const natsPids = natsServerPids(options.natsUrl);
  console.log(
    `nats-server pid(s) sampled: ${natsPids.join(', ')}; load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}`,
  );
  const startedAt = new Date();
  const windows: WindowRecord[] = [];
  const errorReplies: Partial<Record<RpcServerName, unknown>> = {};
  for (let round = 0; round < options.rounds; round++) {
    const order = options.servers.map((_, i) => options.servers[(i + round) % options.servers.length]);
    for (const server of order) {
      const outcome = await runServer(options, server, round, natsPids);
      windows.push(...outcome.windows);
      errorReplies[server] ??= outcome.errorReply;
    }
  }
  // The relay's filter and the handler map must answer a RelayError alike; plain Nest has no filter.
  const mapped = options.servers.filter((server) => server !== 'nest-plain').map((server) => JSON.stringify(errorReplies[server]));
  const sameErrors = new Set(mapped).size <= 1;
  const rows = summarize(options, windows);
  const output = [
    `\`node dist/scripts/bench/rpc-layer-cost.js ${process.argv.slice(2).join(' ')}\``.replace(/ `$/, '`'),
    `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, ${options.rounds} rounds of ${options.requests} requests, load average at end ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ')}`,
    '',
    table(rows),
    '',
    'Error reply for an unknown task, as the client reads it:',
    ...options.servers.map((server) => `- ${server}: ${JSON.stringify(errorReplies[server])}`),
  ].join('\n');
  console.log(`\n${output}`);
  mkdirSync(options.resultsDir, { recursive: true });
  const file = join(options.resultsDir, `rpc-layer-cost-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt,
        options: { ...options, serviceCpuUs: Object.fromEntries(options.serviceCpuUs) },
        natsPids,
        loadAverageAtEnd: loadavg(),
        rows,
        windows,
        errorReplies,
      },
      null,
      2,
    ),
  );
  console.log(`\n${file}`);
  if (!sameErrors) throw new Error('the servers answered the unknown task with different error replies');
  const failed = rows.filter((row) => row.errors > 0);
  if (failed.length > 0) throw new Error(`requests failed: ${failed.map((row) => `${row.server} c=${row.concurrency}: ${row.errors}`).join(', ')}`);
}

if (process.argv[2] === '--serve') {
  await serveRpcBench(process.argv[3] as RpcServerName, process.argv[4]);
  process.send?.({ ready: true });
} else {
  await main();
}
