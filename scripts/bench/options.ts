/** Command-line flags and BENCH_* environment keys of the benchmark (a flag wins over its key). */

export const SERVERS = ['relay', 'sdk-postgres', 'sdk-memory', 'floor'] as const;
export type ServerName = (typeof SERVERS)[number];

export const SCENARIOS = [
  'create',
  'create-linked',
  'a2a-send',
  'get',
  'lifecycle',
  'inbox',
  'fanout',
  'replicas',
  'upstream',
  'upstream-stream',
  'upstream-push',
] as const;
/**
 * Run only when asked for: `--scenarios create-linked` (creates naming a parent, beside the same
 * creates naming none), `--scenarios replicas` starts a second edge and a second tasks service,
 * `--scenarios upstream`, `upstream-stream`, `upstream-push` an upstream A2A agent of the official SDK.
 */
const ON_REQUEST: readonly ScenarioName[] = ['create-linked', 'replicas', 'upstream', 'upstream-stream', 'upstream-push'];
export type ScenarioName = (typeof SCENARIOS)[number];

/** How the upstream agent of an `upstream*` scenario answers, and so how the relay follows its tasks. */
export const UPSTREAM_MODES = { upstream: 'poll', 'upstream-stream': 'stream', 'upstream-push': 'push' } as const;
export type UpstreamScenario = keyof typeof UPSTREAM_MODES;
export type UpstreamMode = (typeof UPSTREAM_MODES)[UpstreamScenario];
export const isUpstreamScenario = (scenario: string): scenario is UpstreamScenario => scenario in UPSTREAM_MODES;

/**
 * `plain`: the NATS at NATS_URL as it is; `secure`: a nats-server of the bench's own with TLS (client
 * certificates) and a least-privilege nkey user per relay process; `private`: the bench's own
 * nats-server as `secure` starts it, without TLS or authorization (what `secure` is compared with).
 */
export const NATS_MODES = ['plain', 'private', 'secure'] as const;
export type NatsMode = (typeof NATS_MODES)[number];

export interface BenchOptions {
  quick: boolean;
  concurrencies: number[];
  rounds: number;
  /** Per measured window: no request starts after this many have, or after windowMs. */
  windowRequests: number;
  windowMs: number;
  /** A window goes on past windowMs (up to 5×) until this many requests have started: enough CPU ticks per request. */
  windowMinRequests: number;
  /** Unmeasured warm-up before each server's first window of a scenario and concurrency. */
  warmupRequests: number;
  warmupMs: number;
  /** How long the upstream scenarios measure the processes' idle CPU, before and after their windows. */
  idleMs: number;
  inboxSizes: number[];
  /** Creates per fanout window, and how long to wait for their webhooks. */
  fanoutEvents: number;
  fanoutWaitMs: number;
  scenarios: ScenarioName[];
  servers: ServerName[];
  postgresUrl: string;
  natsUrl: string;
  nats: NatsMode;
  port: number;
  resultsDir: string;
}

const HELP = `npm run bench [-- options]

  --quick                 short windows, 2 rounds, inbox up to 100k tasks (under 3 minutes)
  --concurrency 1,32      client counts                      (BENCH_CONCURRENCY)
  --rounds 3              alternating rounds per scenario    (BENCH_ROUNDS)
  --requests 2000         max requests per measured window   (BENCH_REQUESTS)
  --window-ms 4000        max milliseconds per window        (BENCH_WINDOW_MS)
  --min-requests 100      …unless fewer started (then up to 5× window-ms)  (BENCH_MIN_REQUESTS)
  --idle-ms 3000          idle CPU measured for, in the upstream scenarios  (BENCH_IDLE_MS)
  --inbox 10000,100000,1000000  task counts for the inbox    (BENCH_INBOX_SIZES)
  --fanout-events 1000    creates per fanout window          (BENCH_FANOUT_EVENTS)
  --scenarios a,b         subset of ${SCENARIOS.join(',')}   (BENCH_SCENARIOS;
                          only when named: create-linked (creates naming a parent, by
                          parent_task_id and by traceparent, beside the same creates naming
                          none); replicas (creates with 1, then 2 edges and tasks);
                          upstream, upstream-stream, upstream-push (a handoff through the
                          relay to an SDK upstream agent that the relay polls, that streams,
                          that pushes, vs the SDK client calling that agent directly))
  --servers a,b           subset of ${SERVERS.join(',')}     (BENCH_SERVERS; relay always runs)
  --nats MODE             plain: the NATS at NATS_URL; secure: the bench starts its own
                          nats-server (TLS verifying client certificates, an nkey user per
                          relay process with its least privilege); private: its own
                          nats-server without TLS or authorization   (BENCH_NATS; plain)
  --results DIR           where JSON and SVG go (bench/results)
Postgres and NATS: BENCH_POSTGRES_URL (postgres://postgres@127.0.0.1:5432), NATS_URL (nats://127.0.0.1:4222).
Ports from BENCH_PORT (18080): relay edge on it, baselines on the next ones.`;

function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean);
}

function numbers(value: string | undefined, name: string): number[] | undefined {
  const items = list(value);
  if (!items) return undefined;
  const parsed = items.map(Number);
  if (parsed.some((item) => !Number.isInteger(item) || item <= 0)) throw new Error(`${name} must be positive integers, got "${value}"`);
  return parsed;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(HELP);
      process.exit(0);
    }
    if (!arg.startsWith('--')) throw new Error(`unexpected argument "${arg}"\n\n${HELP}`);
    const [key, inline] = arg.slice(2).split('=', 2);
    if (key === 'quick') flags.set(key, 'true');
    else flags.set(key, inline ?? argv[++i] ?? '');
  }
  const known = [
    'quick',
    'concurrency',
    'rounds',
    'requests',
    'window-ms',
    'min-requests',
    'idle-ms',
    'inbox',
    'fanout-events',
    'scenarios',
    'servers',
    'nats',
    'results',
  ];
  for (const key of flags.keys()) if (!known.includes(key)) throw new Error(`unknown flag --${key}\n\n${HELP}`);
  const quick = flags.has('quick') || env.BENCH_QUICK === '1' || env.BENCH_QUICK === 'true';
  const pick = (flag: string, key: string): string | undefined => flags.get(flag) ?? env[key];
  const one = (flag: string, key: string, fallback: number): number => numbers(pick(flag, key), `--${flag}`)?.[0] ?? fallback;
  const scenarios = (list(pick('scenarios', 'BENCH_SCENARIOS')) ?? SCENARIOS.filter((scenario) => !ON_REQUEST.includes(scenario))) as ScenarioName[];
  for (const scenario of scenarios) if (!SCENARIOS.includes(scenario)) throw new Error(`unknown scenario "${scenario}" (one of ${SCENARIOS.join(', ')})`);
  const servers = (list(pick('servers', 'BENCH_SERVERS')) ?? [...SERVERS]) as ServerName[];
  for (const server of servers) if (!SERVERS.includes(server)) throw new Error(`unknown server "${server}" (one of ${SERVERS.join(', ')})`);
  if (!servers.includes('relay')) servers.unshift('relay');
  const nats = (pick('nats', 'BENCH_NATS') ?? 'plain') as NatsMode;
  if (!NATS_MODES.includes(nats)) throw new Error(`unknown NATS mode "${nats}" (one of ${NATS_MODES.join(', ')})`);
  return {
    quick,
    concurrencies: numbers(pick('concurrency', 'BENCH_CONCURRENCY'), '--concurrency') ?? [1, 32],
    rounds: one('rounds', 'BENCH_ROUNDS', quick ? 2 : 3),
    windowRequests: one('requests', 'BENCH_REQUESTS', quick ? 400 : 2000),
    windowMs: one('window-ms', 'BENCH_WINDOW_MS', quick ? 1000 : 4000),
    windowMinRequests: one('min-requests', 'BENCH_MIN_REQUESTS', quick ? 30 : 100),
    warmupRequests: quick ? 40 : 150,
    warmupMs: quick ? 500 : 2000,
    idleMs: one('idle-ms', 'BENCH_IDLE_MS', 3000),
    inboxSizes: numbers(pick('inbox', 'BENCH_INBOX_SIZES'), '--inbox') ?? (quick ? [10000, 100000] : [10000, 100000, 1000000]),
    fanoutEvents: one('fanout-events', 'BENCH_FANOUT_EVENTS', quick ? 200 : 1000),
    fanoutWaitMs: quick ? 20000 : 60000,
    scenarios,
    servers: SERVERS.filter((server) => servers.includes(server)),
    postgresUrl: (env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432').replace(/\/+$/, ''),
    natsUrl: env.NATS_URL ?? 'nats://127.0.0.1:4222',
    nats,
    port: Number(env.BENCH_PORT ?? 18080),
    resultsDir: flags.get('results') ?? 'bench/results',
  };
}
