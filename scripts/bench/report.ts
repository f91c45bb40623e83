/**
 * Turns the measured windows into the report: medians over rounds per (scenario, concurrency,
 * server), relay ÷ SDK-on-Postgres ratios taken per round, markdown tables. Pure functions.
 */
import type { ServerName } from './options';
import type { WindowRecord } from './scenarios';
import { median, medianOfRoundRatios } from './stats';

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
    ['create', 'a2a-send', 'get', 'lifecycle', 'inbox', 'fanout'].findIndex((name) => scenario.startsWith(name));
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

export function fmt(value: number | undefined, digits = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  if (Math.abs(value) >= 1000) return Math.round(value).toLocaleString('en-US');
  return value.toFixed(digits);
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

/** p99 of the inbox per size and concurrency, and the ratio of the largest size's p99 to the smallest's. */
export function inboxTable(rows: readonly SummaryRow[]): { table: string; flatness: Record<number, number> } {
  const inbox = rows.filter((row) => row.scenario.startsWith('inbox-'));
  const sizes = [...new Set(inbox.map((row) => Number(row.scenario.slice(6))))].sort((a, b) => a - b);
  const concurrencies = [...new Set(inbox.map((row) => row.concurrency))].sort((a, b) => a - b);
  const flatness: Record<number, number> = {};
  const lines = [
    `| c | ${sizes.map((size) => `p99 ms @ ${size.toLocaleString('en-US')}`).join(' | ')} | largest ÷ smallest |`,
    `|---:|${sizes.map(() => '---:').join('|')}|---:|`,
  ];
  for (const concurrency of concurrencies) {
    const p99 = sizes.map((size) => inbox.find((row) => row.concurrency === concurrency && row.scenario === `inbox-${size}`)?.p99 ?? NaN);
    flatness[concurrency] = p99[p99.length - 1] / p99[0];
    lines.push(`| ${concurrency} | ${p99.map((value) => fmt(value)).join(' | ')} | ${ratio(flatness[concurrency])} |`);
  }
  return { table: lines.join('\n'), flatness };
}
