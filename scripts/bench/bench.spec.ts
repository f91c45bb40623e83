import { decades, escapeXml, logHeight, renderChart, type ChartRow } from './chart';
import { runWindow } from './load-generator';
import { parseOptions } from './options';
import { growthBetween, growthLine, sideOf, walPosition, type GrowthSnapshot, type TableStats } from './pg-growth';
import { ChainRoots, CHILDREN_PER_ROOT } from './chain-creates';
import type { HttpClient } from './load-generator';
import { chainCreatesTable, declineRows, declineTable, eventsTable, inboxTable, lastToFirst, spread, summarize } from './report';
import type { WindowRecord } from './scenarios';
import { privateNatsConfig, secureNatsConfig, withFullPermissionUser } from './secure-nats';
import {
  cpuDeltaMs,
  median,
  medianOfRoundDifferences,
  medianOfRoundRatios,
  parseMachineBusyTicks,
  parseProcStatTicks,
  parseVmHwmKb,
  percentile,
  perRequest,
  summarizeLatencies,
} from './stats';
import { summarizeUpstream, UPSTREAM_STAGES, upstreamTables, type UpstreamWindow } from './upstream-handoff';

/** Checks that every tag opened is closed in order (enough to catch broken SVG from string building). */
function assertWellFormed(xml: string): void {
  const stack: string[] = [];
  for (const match of xml.matchAll(/<(\/?)([a-zA-Z][\w:-]*)([^>]*?)(\/?)>/g)) {
    const [, closing, name, attributes, selfClosing] = match;
    expect((attributes.match(/"/g) ?? []).length % 2).toBe(0);
    if (selfClosing) continue;
    if (closing) expect(stack.pop()).toBe(name);
    else stack.push(name);
  }
  expect(stack).toEqual([]);
  expect(xml.replace(/<[^>]*>/g, '')).not.toMatch(/[<>]|&(?!(amp|lt|gt|quot|apos);)/);
}

function window(partial: Partial<WindowRecord> & Pick<WindowRecord, 'server' | 'round' | 'rps'>): WindowRecord {
  return {
    scenario: 'create',
    concurrency: 32,
    unit: 'request',
    requests: 100,
    errors: 0,
    seconds: 1,
    latencyMs: { p50: 1, p90: 2, p99: 3, max: 4 },
    cpuMs: {},
    cpuMsPerRequest: {},
    totalCpuMsPerRequest: 1,
    ...partial,
  };
}

describe('bench arithmetic', () => {
  it('takes nearest-rank percentiles of sorted latencies', () => {
    const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(sorted, 50)).toBe(50);
    expect(percentile(sorted, 90)).toBe(90);
    expect(percentile(sorted, 99)).toBe(99);
    expect(percentile(sorted, 100)).toBe(100);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
    expect(summarizeLatencies([5, 1, 4, 2, 3])).toEqual({ p50: 3, p90: 5, p99: 5, max: 5 });
  });

  it('takes medians, ignoring values that are not finite', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([NaN, 5])).toBe(5);
    expect(median([])).toBeNaN();
  });

  it('computes ratios round by round, then their median', () => {
    const { ratios, median: middle } = medianOfRoundRatios([100, 300, 90], [1000, 1000, 100]);
    expect(ratios).toEqual([0.1, 0.3, 0.9]);
    expect(middle).toBe(0.3);
    // A round missing on either side, or a zero denominator, is left out.
    expect(medianOfRoundRatios([10, 20, undefined, 5], [10, undefined, 4, 0]).ratios).toEqual([1]);
  });

  it('computes differences round by round, then their median', () => {
    const { differences, median: middle } = medianOfRoundDifferences([150, 140, 190], [100, 120, 110]);
    expect(differences).toEqual([50, 20, 80]);
    expect(middle).toBe(50);
    // A round missing or not finite on either side is left out; a negative difference is kept.
    expect(medianOfRoundDifferences([10, undefined, 30, NaN, 5], [4, 1, undefined, 2, 9]).differences).toEqual([6, -4]);
    expect(medianOfRoundDifferences([], []).median).toBeNaN();
  });

  it('turns clock-tick samples into CPU milliseconds', () => {
    const before = new Map([
      [1, 100],
      [2, 50],
      [4, 900],
    ]);
    const after = new Map([
      [1, 130], // +30 ticks
      [2, 50], // idle
      [3, 7], // born during the window: all 7 ticks
      [4, 10], // pid reused (counter went back): counts as new, 10 ticks
    ]);
    expect(cpuDeltaMs(before, after, [1, 2, 3, 4, 5], 100)).toBe(470);
    expect(cpuDeltaMs(before, after, [1], 250)).toBe(120);
    expect(perRequest(470, 47)).toBe(10);
    expect(perRequest(10, 0)).toBeNaN();
  });

  it('reads utime + stime and VmHWM from /proc texts, whatever the command name holds', () => {
    const stat = '4242 (node (edge) x) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 11 0 3759 222445568 1622';
    expect(parseProcStatTicks(stat)).toEqual({ ppid: 1, ticks: 1801 });
    expect(parseVmHwmKb('Name:\tnode\nVmPeak:\t  1 kB\nVmHWM:\t   29772 kB\nVmRSS:\t 1 kB\n')).toBe(29772);
    expect(parseVmHwmKb('Name:\tkthread\n')).toBeNaN();
  });

  it('reads the busy ticks of all CPUs from /proc/stat: user, nice, system, irq, softirq and steal, not idle or iowait', () => {
    expect(parseMachineBusyTicks('cpu  66102 29 12577 51525 598 0 978 32 0 0\ncpu0 32489 28 5955 26916 75 0 408 10 0 0\n')).toBe(66102 + 29 + 12577 + 978 + 32);
    expect(() => parseMachineBusyTicks('intr 1 2 3\n')).toThrow(/cpu line/);
  });

  it('summarizes rounds and puts the median per-round relay ÷ SDK-on-Postgres ratio on the relay row', () => {
    const rows = summarize([
      window({ server: 'relay', round: 0, rps: 100, totalCpuMsPerRequest: 20 }),
      window({ server: 'sdk-postgres', round: 0, rps: 1000, totalCpuMsPerRequest: 2 }),
      window({ server: 'relay', round: 1, rps: 300, totalCpuMsPerRequest: 10 }),
      window({ server: 'sdk-postgres', round: 1, rps: 500, totalCpuMsPerRequest: 2 }),
      window({ server: 'relay', round: 2, rps: 200, totalCpuMsPerRequest: 12 }),
      window({ server: 'sdk-postgres', round: 2, rps: 800, totalCpuMsPerRequest: 3 }),
    ]);
    const relay = rows.find((row) => row.server === 'relay')!;
    expect(relay.rps).toBe(200);
    // Per round: 0.1, 0.6, 0.25 → median 0.25 (not 200 / 800 of the medians, which happens to agree here, nor the mean).
    expect(relay.ratioRpsVsSdkPostgres).toBeCloseTo(0.25);
    // CPU per round: 10, 5, 4 → 5.
    expect(relay.ratioCpuVsSdkPostgres).toBeCloseTo(5);
    expect(rows.find((row) => row.server === 'sdk-postgres')!.ratioRpsVsSdkPostgres).toBeUndefined();
    expect(rows.map((row) => row.server)).toEqual(['relay', 'sdk-postgres']);
  });

  it('gives the relay create rows an events figure: medians of commit → published, the largest backlog, every lost event', () => {
    const rows = summarize([
      window({ server: 'relay', round: 0, rps: 100, events: { p50: 10, p99: 40, max: 50, backlog: 3, lost: 0 } }),
      window({ server: 'relay', round: 1, rps: 100, events: { p50: 30, p99: 90, max: 95, backlog: 12, lost: 1 } }),
      window({ server: 'relay', round: 2, rps: 100, events: { p50: 20, p99: 60, max: 70, backlog: 0, lost: 0 } }),
      window({ server: 'sdk-postgres', round: 0, rps: 1000 }),
    ]);
    expect(rows.find((row) => row.server === 'relay')!.events).toEqual({ p50: 20, p99: 60, backlog: 12, lost: 1 });
    expect(rows.find((row) => row.server === 'sdk-postgres')!.events).toBeUndefined();
    const table = eventsTable(rows).split('\n');
    expect(table).toHaveLength(3);
    expect(table[2]).toBe('| create | 32 | 100 | 20.0 | 60.0 | 12 | 1 |');
  });
});

describe('bench round-to-round decline', () => {
  const stats = (partial: Partial<TableStats>): TableStats => ({
    totalBytes: 0,
    indexBytes: 0,
    live: 0,
    dead: 0,
    updates: 0,
    hotUpdates: 0,
    autovacuums: 0,
    autoanalyzes: 0,
    ...partial,
  });

  it('takes the last ÷ the first of a series, and refuses a missing or zero first', () => {
    expect(lastToFirst([400, 380, 300])).toBeCloseTo(0.75);
    expect(lastToFirst([200])).toBe(1);
    expect(lastToFirst([])).toBeNaN();
    expect(lastToFirst([0, 10])).toBeNaN();
    expect(lastToFirst([10, NaN])).toBeNaN();
  });

  it('reads WAL locations as 64-bit byte positions', () => {
    expect(walPosition('0/16B3748')).toBe(0x16b3748n);
    expect(walPosition('1/0') - walPosition('0/FFFFFF00')).toBe(256n);
    expect(() => walPosition('16B3748')).toThrow(/WAL location/);
  });

  it("tells the relay's tables from the SDK's and the floor's", () => {
    expect(sideOf('tasks.outbox_events')).toBe('relay');
    expect(sideOf('directory.agents')).toBe('relay');
    expect(sideOf('public.tasks')).toBe('sdk-postgres');
    expect(sideOf('public.bench_floor_tasks')).toBe('floor');
    expect(sideOf('public.migrations')).toBeUndefined();
  });

  it('sums each server’s growth over its tables between two snapshots, a new table growing from nothing', () => {
    const before: GrowthSnapshot = {
      walLsn: '0/1000',
      tables: {
        'tasks.tasks': stats({ totalBytes: 8192, indexBytes: 4096, live: 10, dead: 1, updates: 5, hotUpdates: 5 }),
        'tasks.outbox_events': stats({ totalBytes: 16384, indexBytes: 8192, live: 10, dead: 10, updates: 10, autovacuums: 1 }),
        'public.tasks': stats({ totalBytes: 8192, live: 3 }),
      },
      outbox: { rows: 10, unpublished: 2, pollIndexBytes: 16384, pollScans: 100, pollBlocks: 200 },
    };
    const after: GrowthSnapshot = {
      walLsn: '0/3000',
      tables: {
        'tasks.tasks': stats({ totalBytes: 16384, indexBytes: 8192, live: 20, dead: 1, updates: 6, hotUpdates: 6 }),
        'tasks.outbox_events': stats({ totalBytes: 49152, indexBytes: 24576, live: 20, dead: 20, updates: 20, autovacuums: 2, autoanalyzes: 1 }),
        'tasks.messages': stats({ totalBytes: 8192, live: 10 }),
        'public.tasks': stats({ totalBytes: 8192, live: 3 }),
        'public.migrations': stats({ totalBytes: 99999 }),
      },
      outbox: { rows: 20, unpublished: 0, pollIndexBytes: 24576, pollScans: 140, pollBlocks: 320 },
    };
    const growth = growthBetween(before, after, ['VACUUM tasks.outbox_events', 'VACUUM tasks.outbox_events', 'ANALYZE tasks.tasks']);
    expect(growth.walBytes).toBe(0x2000);
    expect(growth.autovacuumSeen).toEqual(['ANALYZE tasks.tasks', 'VACUUM tasks.outbox_events']);
    // 40 polls read 120 index blocks.
    expect(growth.outbox).toEqual({ rows: 20, unpublished: 0, pollIndexBytes: 24576, pollBlocksPerScan: 3 });
    expect(growth.sides.relay).toEqual({
      totalBytes: 16384 + 49152 + 8192,
      totalBytesDelta: 8192 + 32768 + 8192,
      indexBytesDelta: 4096 + 16384,
      liveDelta: 30,
      dead: 21,
      deadDelta: 10,
      updatesDelta: 11,
      hotUpdatesDelta: 1,
      autovacuums: 1,
      autoanalyzes: 1,
      grewMost: [
        ['tasks.outbox_events', 32768],
        ['tasks.tasks', 8192],
        ['tasks.messages', 8192],
      ],
      deadMost: [
        ['tasks.outbox_events', 20],
        ['tasks.tasks', 1],
      ],
    });
    expect(growth.sides['sdk-postgres']).toMatchObject({ totalBytesDelta: 0, dead: 0, grewMost: [], deadMost: [] });
    expect(Object.keys(growth.sides).sort()).toEqual(['relay', 'sdk-postgres']);
    expect(growthLine(growth)).toBe(
      'WAL +8 kB · relay +48 kB (idx +20 kB) dead 21 (20 in tasks.outbox_events) HOT 1/11 upd autovacuum 1 autoanalyze 1 · sdk-postgres +0 kB (idx +0 kB) dead 0 · outbox 20 rows, 0 unpublished, unpublished index 24 kB, poll 3.0 index blocks/scan · workers: ANALYZE tasks.tasks, VACUUM tasks.outbox_events',
    );
  });

  it("gives each server its req/s per round and last ÷ first, the relay's over the SDK's, with its own growth per round", () => {
    const growth = (server: 'relay' | 'sdk-postgres', walBytes: number, bytes: number, dead: number, seen: string[] = []) => ({
      walBytes,
      autovacuumSeen: seen,
      outbox: { rows: 0, unpublished: 0, pollIndexBytes: 0, pollBlocksPerScan: NaN },
      sides: {
        [server]: { ...stats({}), totalBytesDelta: bytes, dead, deadDelta: 0, liveDelta: 0, updatesDelta: 0, hotUpdatesDelta: 0, grewMost: [], deadMost: [] },
      },
    });
    const records = [
      // Rounds out of order, as the rotation writes them: sorted by round.
      window({
        server: 'relay',
        round: 1,
        rps: 380,
        requests: 380,
        growth: growth('relay', 380 * 2000, 20480, 500),
        machine: { loadAverage: 3, busyCpuMs: 1900, othersCpuMs: 750 },
      }),
      window({ server: 'relay', round: 0, rps: 400, requests: 400, growth: growth('relay', 400 * 2000, 10240, 100) }),
      window({
        server: 'relay',
        round: 2,
        rps: 300,
        requests: 300,
        totalCpuMsPerRequest: 1.5,
        growth: growth('relay', 300 * 3000, 30720, 900, ['VACUUM tasks.outbox_events']),
      }),
      window({ server: 'sdk-postgres', round: 0, rps: 600, requests: 600, growth: growth('sdk-postgres', 600 * 500, 1024, 0) }),
      window({ server: 'sdk-postgres', round: 1, rps: 560, requests: 560 }),
      window({ server: 'sdk-postgres', round: 2, rps: 480, requests: 480, growth: growth('sdk-postgres', 480 * 500, 1024, 0) }),
      window({ server: 'relay', scenario: 'lifecycle', round: 0, rps: 50 }),
    ];
    const rows = declineRows(records);
    expect(rows.map((row) => `${row.scenario}/${row.server}`)).toEqual(['create/relay', 'create/sdk-postgres']);
    const [relay, sdk] = rows;
    expect(relay.rpsByRound).toEqual([400, 380, 300]);
    expect(relay.lastToFirst).toBeCloseTo(0.75);
    expect(sdk.lastToFirst).toBeCloseTo(0.8);
    // 0.75 ÷ 0.8: the relay lost 6 % more than the SDK did in the same run.
    expect(relay.vsSdkPostgres).toBeCloseTo(0.9375);
    expect(sdk.vsSdkPostgres).toBeUndefined();
    expect(relay.cpuMsPerRequestByRound).toEqual([1, 1, 1.5]);
    expect(relay.cpuLastToFirst).toBeCloseTo(1.5);
    expect(relay.walBytesPerRequest).toEqual([2000, 2000, 3000]);
    expect(relay.ownBytesDelta).toEqual([10240, 20480, 30720]);
    expect(relay.ownDeadRows).toEqual([100, 500, 900]);
    expect(relay.autovacuumSeen).toEqual([[], [], ['VACUUM tasks.outbox_events']]);
    expect(sdk.walBytesPerRequest).toEqual([500, NaN, 500]);
    // 750 ms of other processes' CPU in a window of 1 s: 75 % of one CPU.
    expect(relay.othersCpuPercent).toEqual([NaN, 75, NaN]);
    const table = declineTable(rows).split('\n');
    expect(table).toHaveLength(4);
    expect(table[2]).toBe(
      '| create | 32 | AgentRelay | 400 → 380 → 300 | 0.75× | 0.94× | 1.00 → 1.00 → 1.50 | 1.50× | 2,000 → 2,000 → 3,000 | 10 → 20 → 30 | 100 → 500 → 900 | – → 75 → – | r3: VACUUM tasks.outbox_events |',
    );
    expect(table[3]).toBe(
      '| create | 32 | A2A SDK + Postgres | 600 → 560 → 480 | 0.80× |  | 1.00 → 1.00 → 1.00 | 1.00× | 500 → – → 500 | 1 → – → 1 | 0 → – → 0 | – → – → – |  |',
    );
  });
});

describe('bench cost by table size', () => {
  const sized = (scenario: string, p50: number, cpu: number, p99 = p50 * 2): WindowRecord =>
    window({ server: 'relay', round: 0, rps: 100, scenario, latencyMs: { p50, p90: p50, p99, max: p99 }, totalCpuMsPerRequest: cpu });

  it('takes the largest ÷ the smallest, and refuses a missing or zero figure', () => {
    expect(spread([2, 3, 2.5])).toBeCloseTo(1.5);
    expect(spread([4])).toBe(1);
    expect(spread([2, NaN])).toBeNaN();
    expect(spread([0, 1])).toBeNaN();
    expect(spread([])).toBeNaN();
  });

  it('gives each operation and concurrency its figures per size and the max ÷ min of p50 and CPU across the sizes', () => {
    const { table, flatness } = inboxTable(
      summarize([
        sized('inbox-10000', 2, 1.0, 10),
        sized('inbox-1000000', 2.2, 1.1, 12),
        sized('inbox-100000', 4, 1.05, 11),
        sized('get-10000', 1, 0.5),
        sized('get-100000', 1, 0.5),
        sized('get-1000000', 1.5, 0.6),
        sized('create', 3, 2),
      ]),
    );
    expect(flatness.inbox[32]).toEqual({ p50: 2, cpuMsPerRequest: expect.closeTo(1.1), p99LargestToSmallest: expect.closeTo(1.2) });
    expect(flatness.get[32].p50).toBeCloseTo(1.5);
    expect(flatness.create).toBeUndefined();
    const lines = table.split('\n');
    expect(lines[0]).toContain('p50 ms @ 10,000 / 100,000 / 1,000,000');
    expect(lines.slice(2).map((line) => line.split(' | ')[0])).toEqual(['| get', '| inbox']);
    expect(lines[3]).toBe('| inbox | 32 | 2.0 / 4.0 / 2.2 | 10.0 / 11.0 / 12.0 | 1.00 / 1.05 / 1.10 | 2.00× | 1.10× | 1.20× |');
  });
});

describe('bench load windows', () => {
  const slowCall = (ms: number) => () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms));

  it('stops at the request cap, and counts failures as errors', async () => {
    const result = await runWindow({ concurrency: 4, maxRequests: 10, maxMs: 10000 }, async (index) => index % 5 !== 0);
    expect(result.requests).toBe(10);
    expect(result.errors).toBe(2);
    expect(result.latenciesMs).toHaveLength(10);
  });

  it('stops at the time limit unless too few requests started, then at the hard limit', async () => {
    const timed = await runWindow({ concurrency: 1, maxRequests: 1000, maxMs: 30 }, slowCall(10));
    expect(timed.requests).toBeLessThan(10);
    const stretched = await runWindow({ concurrency: 1, maxRequests: 1000, maxMs: 10, minRequests: 6, hardMaxMs: 5000 }, slowCall(10));
    expect(stretched.requests).toBe(6);
    const capped = await runWindow({ concurrency: 1, maxRequests: 1000, maxMs: 10, minRequests: 1000, hardMaxMs: 60 }, slowCall(10));
    expect(capped.requests).toBeLessThan(12);
  });
});

describe('bench chart', () => {
  const rows: ChartRow[] = [
    { group: 'create c=1', server: 'relay', rps: 50, p99: 40 },
    { group: 'create c=1', server: 'sdk-postgres', rps: 800, p99: 4 },
    { group: 'create c=1', server: 'floor', rps: 3500, p99: 2 },
    { group: 'get c=32', server: 'relay', rps: 200, p99: 300 },
    { group: 'get c=32', server: 'sdk-postgres', rps: NaN, p99: NaN },
  ];

  it('renders well-formed SVG with one bar per server, group and metric', () => {
    const svg = renderChart(rows, 'A <title> & "quotes"');
    assertWellFormed(svg);
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg).toContain('A &lt;title&gt; &amp; &quot;quotes&quot;');
    const bars = [
      ...svg.matchAll(/<rect class="bar" data-metric="(\w+)" data-server="([\w-]+)" data-group="([^"]+)" data-value="([^"]+)"[^>]*height="([\d.]+)"/g),
    ].map(([, metric, server, group, value, height]) => ({ metric, server, group, value: Number(value), height: Number(height) }));
    // 4 finite rows × 2 metrics; the NaN row draws nothing.
    expect(bars).toHaveLength(8);
    expect(bars.filter((bar) => bar.metric === 'rps').map((bar) => `${bar.group}/${bar.server}`)).toEqual([
      'create c=1/relay',
      'create c=1/sdk-postgres',
      'create c=1/floor',
      'get c=32/relay',
    ]);
    // Log axis from 10 to 10,000 req/s: heights grow with the log of the value over the axis' low end.
    const rps = bars.filter((bar) => bar.metric === 'rps');
    expect(rps[2].height / rps[0].height).toBeCloseTo(Math.log10(350) / Math.log10(5), 1);
    expect(rps[0].height).toBeLessThan(rps[3].height);
    expect(rps[3].height).toBeLessThan(rps[1].height);
    const p99 = bars.filter((bar) => bar.metric === 'p99');
    expect(p99.find((bar) => bar.group === 'get c=32')!.value).toBe(300);
    expect(Math.max(...p99.map((bar) => bar.height))).toBeLessThanOrEqual(220);
  });

  it('has helpers that round axes and escape text', () => {
    expect(decades([50, 800, 3500, NaN])).toEqual({ low: 10, high: 10000 });
    expect(decades([0.5, 0.7])).toEqual({ low: 0.1, high: 1 });
    expect(decades([])).toEqual({ low: 1, high: 10 });
    expect(logHeight(1000, 10, 10000, 300)).toBeCloseTo(200);
    expect(logHeight(5, 10, 10000, 300)).toBe(1);
    expect(escapeXml(`<a & 'b'>`)).toBe('&lt;a &amp; &apos;b&apos;&gt;');
  });
});

describe('bench NATS mode', () => {
  it('is plain (the NATS at NATS_URL) unless --nats or BENCH_NATS says secure; the flag wins', () => {
    expect(parseOptions([], {}).nats).toBe('plain');
    expect(parseOptions([], { BENCH_NATS: 'secure' }).nats).toBe('secure');
    expect(parseOptions(['--nats', 'secure'], {}).nats).toBe('secure');
    expect(parseOptions(['--nats=plain'], { BENCH_NATS: 'secure' }).nats).toBe('plain');
    expect(parseOptions(['--nats', 'private'], {}).nats).toBe('private');
    expect(() => parseOptions(['--nats', 'tls'], {})).toThrow('unknown NATS mode "tls" (one of plain, private, secure)');
  });

  it('adds the bench user to the generated users without permissions (everything allowed) and keeps the relay users as they are', () => {
    const auth = [
      'authorization {',
      '  EDGE = { publish: { allow: ["a"] } }',
      '  users = [',
      '    { nkey: "UEDGE", permissions: $EDGE },',
      '    { nkey: "UTASKS", permissions: $TASKS }',
      '  ]',
      '}',
      '',
    ].join('\n');
    const withBench = withFullPermissionUser(auth, 'UBENCH');
    expect(withBench).toContain(
      '  users = [\n    { nkey: "UBENCH" },\n    { nkey: "UEDGE", permissions: $EDGE },\n    { nkey: "UTASKS", permissions: $TASKS }\n  ]',
    );
    expect(withBench.replace('    { nkey: "UBENCH" },\n', '')).toBe(auth);
    expect(() => withFullPermissionUser('authorization { token: "x" }', 'UBENCH')).toThrow(/no "users = \[" list/);
  });

  it('configures the secure server to verify client certificates and to include the generated authorization', () => {
    const config = secureNatsConfig('/tmp/x');
    expect(config).toContain('max_payload: 2MB');
    expect(config).toMatch(/^tls \{ cert_file: "\/tmp\/x\/server.pem", key_file: "\/tmp\/x\/server.key", ca_file: "\/tmp\/x\/ca.pem", verify: true/m);
    expect(config).toContain('include "credentials/auth.conf"');
  });

  it('configures the private server with the same payload limit and neither TLS nor authorization', () => {
    const config = privateNatsConfig();
    expect(config).toContain('max_payload: 2MB');
    expect(config).not.toMatch(/tls|include|authorization/);
  });
});

describe('upstream scenario summary', () => {
  const relayWindow = (round: number, p50: number, cpu: Record<string, number>, stagesMs: number[], mode: UpstreamWindow['mode'] = 'poll'): UpstreamWindow => ({
    mode,
    path: 'relay',
    concurrency: 1,
    round,
    handoffs: 20,
    errors: 0,
    rps: 5,
    p50,
    p95: p50 * 2,
    cpuMsPerHandoff: Object.fromEntries(Object.entries(cpu).map(([name, ms]) => [name, ms + 1])),
    netCpuMsPerHandoff: cpu,
    stages: { medianMs: stagesMs, polls: { median: 1, max: round + 1 }, handoffs: 20 },
  });
  const directWindow = (round: number, p50: number, upstreamCpu: number, mode: UpstreamWindow['mode'] = 'poll'): UpstreamWindow => ({
    mode,
    path: 'direct',
    concurrency: 1,
    round,
    handoffs: 100,
    errors: round,
    rps: 50,
    p50,
    p95: p50 * 3,
    cpuMsPerHandoff: { 'sdk-upstream': upstreamCpu + 1, bench: 2 },
    netCpuMsPerHandoff: { 'sdk-upstream': upstreamCpu, bench: 2 },
  });
  const stages = (base: number): number[] => UPSTREAM_STAGES.map((_, index) => base + index);

  it('takes the added latency round by round, sums the relay’s own processes without the upstream agent, and keeps the stages', () => {
    const [row] = summarizeUpstream([
      relayWindow(0, 100, { edge: 10, tasks: 20, notifier: 30, 'pg-relay': 5, 'sdk-upstream': 4, bench: 50 }, stages(10)),
      directWindow(0, 10, 3),
      relayWindow(1, 300, { edge: 12, tasks: 22, notifier: 32, 'pg-relay': 7, 'sdk-upstream': 6, bench: 50 }, stages(30)),
      directWindow(1, 100, 5),
    ]);
    expect(row.concurrency).toBe(1);
    expect(row.rounds).toBe(2);
    // Per round 90 and 200: their median, not the difference of the two medians (200 − 55).
    expect(row.addedP50).toBe(145);
    expect(row.relay).toEqual({ p50: 200, p95: 400, rps: 5, errors: 0 });
    expect(row.direct).toEqual({ p50: 55, p95: 165, rps: 50, errors: 1 });
    // edge + tasks + notifier + pg-relay: 65 and 73, the upstream agent and the load generator apart.
    expect(row.relayAddedCpu).toBe(69);
    expect(row.relayAddedCpuWithIdle).toBe(73);
    expect(row.relayCpu['sdk-upstream']).toBe(5);
    expect(row.upstreamDirectCpu).toBe(4);
    expect(row.stagesMs).toEqual(stages(20));
    expect(row.polls).toEqual({ median: 1, max: 2 });
    const tables = upstreamTables([row], { before: { notifier: 6.6 }, after: { notifier: 7 } });
    expect(tables).toContain('| 1 | 2 | 200.0 | 400.0 | 55.0 | 165.0 | 145.0 |');
    expect(tables).toContain('**69.00** | 73.00 | **4.00** | 17.25× |');
    expect(tables).toContain('notifier 6.6; after the last window: notifier 7.0');
  });

  it('sets the handoff floor beside the relay: its added latency round by round, its own processes summed, the relay over it', () => {
    const floorWindow = (round: number, p50: number, cpu: Record<string, number>): UpstreamWindow => ({
      ...directWindow(round, p50, 0),
      path: 'floor',
      errors: 0,
      rps: 20,
      cpuMsPerHandoff: cpu,
      netCpuMsPerHandoff: cpu,
    });
    const [row] = summarizeUpstream([
      relayWindow(0, 100, { edge: 10, tasks: 20, notifier: 30, 'pg-relay': 5 }, stages(10)),
      directWindow(0, 10, 3),
      floorWindow(0, 30, { 'floor-edge': 1, 'floor-tasks': 2, 'floor-notifier': 3, 'nats-server': 1, 'pg-handoff-floor': 1, 'sdk-upstream': 9, bench: 40 }),
      relayWindow(1, 300, { edge: 12, tasks: 22, notifier: 32, 'pg-relay': 7 }, stages(30)),
      directWindow(1, 100, 5),
      floorWindow(1, 140, { 'floor-edge': 2, 'floor-tasks': 3, 'floor-notifier': 4, 'nats-server': 1, 'pg-handoff-floor': 2, 'sdk-upstream': 9, bench: 40 }),
    ]);
    // The relay's figures are its own windows' alone.
    expect(row.relayAddedCpu).toBe(69);
    expect(row.addedP50).toBe(145);
    // Per round 20 and 40; own CPU 8 and 12, the upstream agent and the load generator apart.
    expect(row.floor).toEqual({
      p50: 85,
      p95: 255,
      rps: 20,
      errors: 0,
      addedP50: 30,
      ownCpu: 10,
      cpu: { 'floor-edge': 1.5, 'floor-tasks': 2.5, 'floor-notifier': 3.5, 'nats-server': 1, 'pg-handoff-floor': 1.5, 'sdk-upstream': 9, bench: 40 },
    });
    const tables = upstreamTables([row], { before: {}, after: {} });
    expect(tables).toContain('| 1 | 85.0 | 30.0 | 20 | 0 | 1.50 | 2.50 | 3.50 | 1.00 | 1.50 | 9.00 | **10.00** | 6.90× | 4.83× |');
    // Without floor windows (the streaming and pushing agents) there is no floor table.
    expect(upstreamTables(summarizeUpstream([relayWindow(0, 100, { edge: 10 }, stages(10)), directWindow(0, 10, 3)]), { before: {}, after: {} })).not.toContain(
      'handoff floor',
    );
  });

  it('keeps each upstream agent apart: a row per mode and concurrency, each from its own windows', () => {
    const rows = summarizeUpstream([
      relayWindow(0, 100, { edge: 10 }, stages(10), 'poll'),
      directWindow(0, 10, 3, 'poll'),
      relayWindow(0, 40, { edge: 4 }, stages(10), 'stream'),
      directWindow(0, 30, 2, 'stream'),
      relayWindow(0, 250, { edge: 6 }, stages(10), 'push'),
      directWindow(0, 110, 2, 'push'),
    ]);
    expect(rows.map((row) => [row.mode, row.concurrency, row.addedP50, row.relayAddedCpu])).toEqual([
      ['poll', 1, 90, 10],
      ['stream', 1, 10, 4],
      ['push', 1, 140, 6],
    ]);
  });
});

describe('create-linked scenario', () => {
  const created = (scenario: string, round: number, cpu: number, p50 = 5): WindowRecord =>
    window({ server: 'relay', scenario, round, rps: 100, concurrency: 1, totalCpuMsPerRequest: cpu, latencyMs: { p50, p90: p50, p99: p50, max: p50 } });

  it('takes each linked kind’s CPU ÷ the unlinked create’s round by round', () => {
    const table = chainCreatesTable([
      created('create-unlinked', 0, 10),
      created('create-linked', 0, 11),
      created('create-traced', 0, 12),
      created('create-unlinked', 1, 20),
      created('create-linked', 1, 21, 7),
      created('create-traced', 1, 30),
      created('create', 0, 99),
    ]);
    // linked: 1.1 and 1.05 → 1.075 (not 16 ÷ 15); traced: 1.2 and 1.5 → 1.35.
    expect(table).toContain('| 1 | 2 | 5.0 | 6.0 | 5.0 | 15.00 | 16.00 | 21.00 | 1.075× | 1.350× | 0 |');
  });

  it('spreads a slot’s creates over its roots round-robin and never gives a root more children than the chain budget allows', async () => {
    let made = 0;
    const client = {
      post: async (_path: string, body: { params: { recipient: string } }, headers: Record<string, string>) => {
        expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
        expect(body.params.recipient).toBe('s0@bench');
        return { status: 200, json: { result: { task_id: `root-${made++}` } } };
      },
    } as unknown as HttpClient;
    const agent = (handle: string) => ({ id: handle, handle, key: 'k' });
    const roots = new ChainRoots(client, agent('origin@bench'), () => agent('s0@bench'));
    await roots.prepare(1, 2 * CHILDREN_PER_ROOT);
    expect(roots.made).toEqual(['root-0', 'root-1']);
    const picked: string[] = [];
    for (let i = 0; i < 2 * CHILDREN_PER_ROOT; i++) picked.push((await roots.next(0)).taskId);
    expect(picked.slice(0, 4)).toEqual(['root-0', 'root-1', 'root-0', 'root-1']);
    expect(picked.filter((id) => id === 'root-0')).toHaveLength(CHILDREN_PER_ROOT);
    expect(roots.madeDuringWindows).toBe(0);
    // Both full: the next create gets a new root, made during the window.
    expect((await roots.next(0)).taskId).toBe('root-2');
    expect(roots.madeDuringWindows).toBe(1);
    // A new window drops the full roots and tops the slot's room up again.
    await roots.prepare(1, 10);
    expect((await roots.next(0)).taskId).toBe('root-2');
  });

  it('runs only when named', () => {
    expect(parseOptions([], {}).scenarios).not.toContain('create-linked');
    expect(parseOptions([], {}).scenarios).not.toContain('upstream-push');
    expect(parseOptions(['--scenarios', 'create-linked,upstream-stream,upstream-push'], {}).scenarios).toEqual([
      'create-linked',
      'upstream-stream',
      'upstream-push',
    ]);
  });
});
