/**
 * Turns the measured windows into the report: medians over rounds per (scenario, concurrency,
 * server), relay ÷ SDK-on-Postgres ratios taken per round, markdown tables. Pure functions.
 */
import { CHAIN_CREATES, type ChainCreate } from './chain-creates';
import type { ServerName } from './options';
import type { WindowRecord } from './scenarios';
import { fmt, median, medianOfRoundRatios, perRequest } from './stats';

export interface SummaryRow {
  scenario: string;
  concurrency: number;
  server: ServerName;
  unit: WindowRecord['unit'];
  rounds: number;
  requests: number;
  errors: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  totalCpuMsPerRequest: number;
  cpuMsPerRequest: Record<string, number>;
  /** relay ÷ sdk-postgres, median of per-round ratios (relay rows of compared scenarios only). */
  ratioRpsVsSdkPostgres?: number;
  ratioCpuVsSdkPostgres?: number;
  /** The relay's create windows: commit → published, medians over rounds, and the largest backlog at a window's end. */
  events?: { p50: number; p99: number; backlog: number; lost: number };
}

export const SERVER_LABELS: Record<ServerName, string> = {
  relay: 'AgentRelay',
  'sdk-postgres': 'A2A SDK + Postgres',
  'sdk-memory': 'A2A SDK in-memory',
  floor: 'floor (http + 1 INSERT)',
};

const key = (record: { scenario: string; concurrency: number }): string => `${record.scenario}\u0000${record.concurrency}`;

export function summarize(records: readonly WindowRecord[]): SummaryRow[] {
  const groups = new Map<string, WindowRecord[]>();
  for (const record of records) {
    const id = `${key(record)}\u0000${record.server}`;
    groups.set(id, [...(groups.get(id) ?? []), record]);
  }
  const rows: SummaryRow[] = [];
  for (const windows of groups.values()) {
    const first = windows[0];
    const processes = [...new Set(windows.flatMap((window) => Object.keys(window.cpuMsPerRequest)))];
    rows.push({
      scenario: first.scenario,
      concurrency: first.concurrency,
      server: first.server,
      unit: first.unit,
      rounds: windows.length,
      requests: windows.reduce((sum, window) => sum + window.requests, 0),
      errors: windows.reduce((sum, window) => sum + window.errors, 0),
      rps: median(windows.map((window) => window.rps)),
      p50: median(windows.map((window) => window.latencyMs.p50)),
      p90: median(windows.map((window) => window.latencyMs.p90)),
      p99: median(windows.map((window) => window.latencyMs.p99)),
      totalCpuMsPerRequest: median(windows.map((window) => window.totalCpuMsPerRequest)),
      cpuMsPerRequest: Object.fromEntries(processes.map((name) => [name, median(windows.map((window) => window.cpuMsPerRequest[name] ?? NaN))])),
      ...eventsOf(windows),
    });
  }
  // Per-round ratios: the relay's and the SDK-on-Postgres server's windows of the same round.
  for (const row of rows) {
    if (row.server !== 'relay') continue;
    const byRound = (server: ServerName, pick: (window: WindowRecord) => number): Array<number | undefined> => {
      const windows = records.filter((window) => window.server === server && key(window) === key(row));
      const rounds: Array<number | undefined> = [];
      for (const window of windows) rounds[window.round] = pick(window);
      return rounds;
    };
    const sdkRounds = byRound('sdk-postgres', (window) => window.rps);
    if (sdkRounds.every((value) => value === undefined)) continue;
    row.ratioRpsVsSdkPostgres = medianOfRoundRatios(
      byRound('relay', (window) => window.rps),
      sdkRounds,
    ).median;
    row.ratioCpuVsSdkPostgres = medianOfRoundRatios(
      byRound('relay', (window) => window.totalCpuMsPerRequest),
      byRound('sdk-postgres', (window) => window.totalCpuMsPerRequest),
    ).median;
  }
  const scenarioOrder = (scenario: string): number =>
    ['create', 'a2a-send', 'get', 'lifecycle', 'inbox', 'watch', 'fanout'].findIndex((name) => scenario.startsWith(name));
  const serverOrder: ServerName[] = ['relay', 'sdk-postgres', 'sdk-memory', 'floor'];
  const size = (scenario: string): number => Number(scenario.split('-')[1] ?? 0) || 0;
  return rows.sort(
    (a, b) =>
      scenarioOrder(a.scenario) - scenarioOrder(b.scenario) ||
      size(a.scenario) - size(b.scenario) ||
      a.concurrency - b.concurrency ||
      serverOrder.indexOf(a.server) - serverOrder.indexOf(b.server),
  );
}

function eventsOf(windows: readonly WindowRecord[]): Pick<SummaryRow, 'events'> {
  const lags = windows.flatMap((window) => (window.events ? [window.events] : []));
  if (lags.length === 0) return {};
  return {
    events: {
      p50: median(lags.map((lag) => lag.p50)),
      p99: median(lags.map((lag) => lag.p99)),
      backlog: Math.max(...lags.map((lag) => lag.backlog)),
      lost: lags.reduce((sum, lag) => sum + lag.lost, 0),
    },
  };
}

const ratio = (value: number | undefined): string => (value === undefined || !Number.isFinite(value) ? '' : `${value.toFixed(2)}×`);

export function mainTable(rows: readonly SummaryRow[]): string {
  const lines = [
    '| scenario | c | server | req/s | p50 ms | p90 ms | p99 ms | errors | CPU ms/req | req/s ÷ SDK+PG | CPU ÷ SDK+PG |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const unit = row.unit === 'request' ? '' : ` (per ${row.unit})`;
    lines.push(
      `| ${row.scenario}${unit} | ${row.concurrency} | ${SERVER_LABELS[row.server]} | ${fmt(row.rps, 0)} | ${fmt(row.p50)} | ${fmt(row.p90)} | ${fmt(row.p99)} | ${row.errors} | ${fmt(row.totalCpuMsPerRequest, 2)} | ${ratio(row.ratioRpsVsSdkPostgres)} | ${ratio(row.ratioCpuVsSdkPostgres)} |`,
    );
  }
  return lines.join('\n');
}

/** Commit → published of the relay's create windows, and how many events were still unpublished when a window's load ended. */
export function eventsTable(rows: readonly SummaryRow[]): string {
  const lines = [
    '| scenario | c | req/s | commit → published p50 ms | p99 ms | backlog at the end (max over rounds) | never published |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    if (!row.events) continue;
    lines.push(
      `| ${row.scenario} | ${row.concurrency} | ${fmt(row.rps, 0)} | ${fmt(row.events.p50)} | ${fmt(row.events.p99)} | ${row.events.backlog} | ${row.events.lost} |`,
    );
  }
  return lines.join('\n');
}

export const CPU_COLUMNS: Array<[string, string[]]> = [
  ['edge', ['edge']],
  ['tasks', ['tasks']],
  ['directory', ['directory']],
  ['notifier', ['notifier']],
  ['NATS server', ['nats-server']],
  ['baseline process', ['sdk-postgres', 'sdk-memory', 'floor']],
  ['PG backends', ['pg-relay', 'pg-sdk-postgres', 'pg-floor']],
  ['total', []],
  ['PG background', ['pg-background']],
  ['load generator', ['bench']],
];

export function cpuTable(rows: readonly SummaryRow[]): string {
  const lines = [`| scenario | c | server | ${CPU_COLUMNS.map(([name]) => name).join(' | ')} |`, `|---|---:|---|${CPU_COLUMNS.map(() => '---:').join('|')}|`];
  for (const row of rows) {
    const cells = CPU_COLUMNS.map(([name, groups]) => {
      if (name === 'total') return `**${fmt(row.totalCpuMsPerRequest, 2)}**`;
      const values = groups.map((group) => row.cpuMsPerRequest[group]).filter((value): value is number => value !== undefined);
      return values.length
        ? fmt(
            values.reduce((a, b) => a + b, 0),
            2,
          )
        : '';
    });
    lines.push(`| ${row.scenario} | ${row.concurrency} | ${SERVER_LABELS[row.server]} | ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

export function rssTable(peaks: Record<string, number>): string {
  const lines = ['| process | peak RSS (VmHWM) MiB |', '|---|---:|'];
  for (const [name, kb] of Object.entries(peaks).sort()) lines.push(`| ${name} | ${fmt(kb / 1024)} |`);
  return lines.join('\n');
}

/** The operations measured at every table size (`<operation>-<size>`), in the order of the table. */
export const SIZED_OPERATIONS = ['create', 'get', 'inbox', 'watch'] as const;

/** How far an operation's cost moves across the table sizes: the largest ÷ the smallest figure, p50 and CPU per request. */
export interface Flatness {
  p50: number;
  cpuMsPerRequest: number;
  /** The largest size's p99 ÷ the smallest size's. */
  p99LargestToSmallest: number;
}

/** The largest ÷ the smallest of `values`; NaN when one is missing. */
export function spread(values: readonly number[]): number {
  if (values.length === 0 || values.some((value) => !Number.isFinite(value) || value <= 0)) return NaN;
  return Math.max(...values) / Math.min(...values);
}

/**
 * p50, p99 and CPU per request of each sized operation at each table size and concurrency, with
 * its flatness (max ÷ min across sizes of the p50 and of the CPU per request): near 1× the cost
 * does not grow with the table.
 */
export function inboxTable(rows: readonly SummaryRow[]): { table: string; flatness: Record<string, Record<number, Flatness>> } {
  const sized = rows.filter((row) => SIZED_OPERATIONS.some((operation) => row.scenario.startsWith(`${operation}-`)));
  const sizeOf = (scenario: string): number => Number(scenario.slice(scenario.indexOf('-') + 1));
  const sizes = [...new Set(sized.map((row) => sizeOf(row.scenario)))].sort((a, b) => a - b);
  const concurrencies = [...new Set(sized.map((row) => row.concurrency))].sort((a, b) => a - b);
  const at = (values: number[]): string => values.map((value) => fmt(value)).join(' / ');
  const flatness: Record<string, Record<number, Flatness>> = {};
  const label = sizes.map((size) => size.toLocaleString('en-US')).join(' / ');
  const lines = [
    `| operation | c | p50 ms @ ${label} | p99 ms @ ${label} | CPU ms/req @ ${label} | p50 max ÷ min | CPU max ÷ min | p99 largest ÷ smallest |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const operation of SIZED_OPERATIONS) {
    for (const concurrency of concurrencies) {
      const found = sizes.map((size) => sized.find((row) => row.concurrency === concurrency && row.scenario === `${operation}-${size}`));
      if (found.every((row) => row === undefined)) continue;
      const p50 = found.map((row) => row?.p50 ?? NaN);
      const p99 = found.map((row) => row?.p99 ?? NaN);
      const cpu = found.map((row) => row?.totalCpuMsPerRequest ?? NaN);
      const figure: Flatness = { p50: spread(p50), cpuMsPerRequest: spread(cpu), p99LargestToSmallest: p99[p99.length - 1] / p99[0] };
      (flatness[operation] ??= {})[concurrency] = figure;
      lines.push(
        `| ${operation} | ${concurrency} | ${at(p50)} | ${at(p99)} | ${cpu.map((value) => fmt(value, 2)).join(' / ')} | ${ratio(figure.p50)} | ${ratio(figure.cpuMsPerRequest)} | ${ratio(figure.p99LargestToSmallest)} |`,
      );
    }
  }
  return { table: lines.join('\n'), flatness };
}

/** How one server's throughput moved over the rounds of one scenario and concurrency, with what grew in its windows. */
export interface DeclineRow {
  scenario: string;
  concurrency: number;
  server: ServerName;
  /** req/s of each round's window, in round order. */
  rpsByRound: number[];
  /** The last round's req/s ÷ the first's: below 1 the server slowed down over the run. */
  lastToFirst: number;
  /** Relay rows: the relay's last ÷ first over the SDK-on-Postgres server's (below 1, the relay declined more). */
  vsSdkPostgres?: number;
  /** CPU ms per request of the server's own processes, per round, and the last ÷ the first: above 1 each request came to cost more (its own work grew), whatever the machine's load. */
  cpuMsPerRequestByRound: number[];
  cpuLastToFirst: number;
  /** Per round, from its window: WAL bytes per request, its own tables' growth in bytes, their dead rows at the end, autovacuum workers seen. */
  walBytesPerRequest: number[];
  ownBytesDelta: number[];
  ownDeadRows: number[];
  autovacuumSeen: string[][];
  /** Per round: the CPU the machine's other processes (not sampled by the bench) used during the window, in % of one CPU. */
  othersCpuPercent: number[];
}

/** The last ÷ the first of a series; NaN when either is missing or the first is not positive. */
export function lastToFirst(values: readonly number[]): number {
  const first = values[0];
  const last = values[values.length - 1];
  return values.length > 0 && Number.isFinite(first) && Number.isFinite(last) && first > 0 ? last / first : NaN;
}

/** One row per scenario, concurrency and server measured over more than one round, in the order of `summarize`. */
export function declineRows(records: readonly WindowRecord[]): DeclineRow[] {
  const rows: DeclineRow[] = [];
  for (const summary of summarize(records)) {
    const windows = records.filter((record) => record.server === summary.server && key(record) === key(summary)).sort((a, b) => a.round - b.round);
    if (windows.length < 2) continue;
    const rpsByRound = windows.map((window) => window.rps);
    rows.push({
      scenario: summary.scenario,
      concurrency: summary.concurrency,
      server: summary.server,
      rpsByRound,
      lastToFirst: lastToFirst(rpsByRound),
      cpuMsPerRequestByRound: windows.map((window) => window.totalCpuMsPerRequest),
      cpuLastToFirst: lastToFirst(windows.map((window) => window.totalCpuMsPerRequest)),
      walBytesPerRequest: windows.map((window) => (window.growth ? perRequest(window.growth.walBytes, window.requests - window.errors) : NaN)),
      ownBytesDelta: windows.map((window) => window.growth?.sides[window.server]?.totalBytesDelta ?? NaN),
      ownDeadRows: windows.map((window) => window.growth?.sides[window.server]?.dead ?? NaN),
      autovacuumSeen: windows.map((window) => window.growth?.autovacuumSeen ?? []),
      othersCpuPercent: windows.map((window) => (window.machine && window.seconds > 0 ? window.machine.othersCpuMs / window.seconds / 10 : NaN)),
    });
  }
  for (const row of rows) {
    if (row.server !== 'relay') continue;
    const sdk = rows.find((other) => other.server === 'sdk-postgres' && key(other) === key(row));
    if (sdk) row.vsSdkPostgres = row.lastToFirst / sdk.lastToFirst;
  }
  return rows;
}

/** The decline table: req/s per round and last ÷ first per server side by side, with what grew in each round's window. */
export function declineTable(rows: readonly DeclineRow[]): string {
  const series = (values: readonly number[], digits = 0): string => values.map((value) => fmt(value, digits)).join(' → ');
  const kB = (values: readonly number[]): string => series(values.map((value) => value / 1024));
  const lines = [
    '| scenario | c | server | req/s by round | last ÷ first | relay ÷ SDK of last ÷ first | CPU ms/req by round | CPU last ÷ first | WAL B/req by round | own tables Δ kB by round | own dead rows at the end by round | CPU of other processes, % by round | autovacuum workers seen |',
    '|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    const workers = row.autovacuumSeen.map((seen, round) => (seen.length ? `r${round + 1}: ${seen.join(', ')}` : '')).filter(Boolean);
    lines.push(
      `| ${row.scenario} | ${row.concurrency} | ${SERVER_LABELS[row.server]} | ${series(row.rpsByRound)} | ${ratio(row.lastToFirst)} | ${ratio(row.vsSdkPostgres)} | ${series(row.cpuMsPerRequestByRound, 2)} | ${ratio(row.cpuLastToFirst)} | ${series(row.walBytesPerRequest)} | ${kB(row.ownBytesDelta)} | ${series(row.ownDeadRows)} | ${series(row.othersCpuPercent)} | ${workers.join('; ')} |`,
    );
  }
  return lines.join('\n');
}

/** Per concurrency: each kind's p50 and CPU ms per create, and each linked kind's CPU ÷ the unlinked create's, as medians of per-round ratios. */
export function chainCreatesTable(records: readonly WindowRecord[]): string {
  const ours = records.filter((record) => record.server === 'relay' && (CHAIN_CREATES as readonly string[]).includes(record.scenario));
  const lines = [
    '| c | rounds | create p50 ms | linked p50 ms | traced p50 ms | create CPU ms | linked CPU ms | traced CPU ms | linked ÷ create CPU | traced ÷ create CPU | errors |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const concurrency of [...new Set(ours.map((record) => record.concurrency))].sort((a, b) => a - b)) {
    const at = ours.filter((record) => record.concurrency === concurrency);
    const of = (kind: ChainCreate): WindowRecord[] => at.filter((record) => record.scenario === kind);
    const rounds = Math.max(...at.map((record) => record.round)) + 1;
    const byRound = (kind: ChainCreate): Array<number | undefined> =>
      Array.from({ length: rounds }, (_, round) => of(kind).find((record) => record.round === round)?.totalCpuMsPerRequest);
    const p50 = (kind: ChainCreate): string => fmt(median(of(kind).map((record) => record.latencyMs.p50)));
    const cpu = (kind: ChainCreate): string => fmt(median(of(kind).map((record) => record.totalCpuMsPerRequest)), 2);
    const ratio = (kind: ChainCreate): string => `${fmt(medianOfRoundRatios(byRound(kind), byRound('create-unlinked')).median, 3)}×`;
    const errors = at.reduce((sum, record) => sum + record.errors, 0);
    lines.push(
      `| ${concurrency} | ${rounds} | ${p50('create-unlinked')} | ${p50('create-linked')} | ${p50('create-traced')} | ${cpu('create-unlinked')} | ${cpu('create-linked')} | ${cpu('create-traced')} | ${ratio('create-linked')} | ${ratio('create-traced')} | ${errors} |`,
    );
  }
  return lines.join('\n');
}
