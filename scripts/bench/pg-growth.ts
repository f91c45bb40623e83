/**
 * What grows in Postgres while the bench runs, per server: the size of each server's tables and
 * their indexes, their live and dead rows, their updates (and how many were HOT), the autovacuum
 * and autoanalyze runs on them, the autovacuum workers seen at work during a window, the WAL written
 * and the relay's outbox (rows kept, rows not published yet). Sampled before and after every window.
 *
 * Every server writes to the one bench database, each to its own tables: the relay to its schemas
 * (tasks, directory, …), the SDK to `public.tasks`, the floor to `public.bench_floor_tasks`. The WAL
 * position is the cluster's: its growth over a window is the window's server's only while nothing
 * else writes (the rounds alternate servers, so other writers' WAL lands on every server alike).
 * Table counters come from the statistics system, which backends report at most once a second (and
 * within 10 s once idle): a window's row counts may land partly in the next window; the sizes are
 * the files' own and exact.
 */
import type pg from 'pg';
import type { ServerName } from './options';
import { perRequest } from './stats';

export interface TableStats {
  totalBytes: number;
  indexBytes: number;
  live: number;
  dead: number;
  /** Rows updated, and how many of those updates were HOT (no new index entries). */
  updates: number;
  hotUpdates: number;
  autovacuums: number;
  autoanalyzes: number;
}

export interface GrowthSnapshot {
  /** pg_current_wal_lsn() as text, `X/Y`. */
  walLsn: string;
  /** `schema.table` → its figures, for every user table of the bench database. */
  tables: Record<string, TableStats>;
  /** The relay's outbox: rows kept, rows not published yet, and its index of unpublished rows (the relay's poll reads it 40 times a second). */
  outbox: OutboxSnapshot;
}

export interface OutboxSnapshot {
  rows: number;
  unpublished: number;
  /** Size of the index of unpublished rows; its scans so far and the index blocks they read (hit or not). */
  pollIndexBytes: number;
  pollScans: number;
  pollBlocks: number;
}

/** One server's tables over a window: the sums over its tables of their growth, and their state at its end. */
export interface SideGrowth {
  totalBytes: number;
  totalBytesDelta: number;
  indexBytesDelta: number;
  liveDelta: number;
  dead: number;
  deadDelta: number;
  updatesDelta: number;
  hotUpdatesDelta: number;
  autovacuums: number;
  autoanalyzes: number;
  /** The tables whose size grew the most, with their growth in bytes (largest first, up to 3). */
  grewMost: Array<[string, number]>;
  /** The tables with the most dead rows at the window's end (most first, up to 3). */
  deadMost: Array<[string, number]>;
}

export interface WindowGrowth {
  /** WAL bytes written by the whole Postgres cluster during the window. */
  walBytes: number;
  /** Per server whose tables exist (relay, sdk-postgres, floor). */
  sides: Partial<Record<ServerName, SideGrowth>>;
  /** The tables autovacuum workers were seen working on during the window (`VACUUM schema.table`, `ANALYZE …`). */
  autovacuumSeen: string[];
  /** The relay's outbox at the window's end, and the index blocks each poll for unpublished rows read during the window. */
  outbox: { rows: number; unpublished: number; pollIndexBytes: number; pollBlocksPerScan: number };
}

/** Whose a table is: the SDK's task store, the floor's table, or (any other schema than public) the relay's. */
export function sideOf(table: string): ServerName | undefined {
  if (table === 'public.tasks') return 'sdk-postgres';
  if (table === 'public.bench_floor_tasks') return 'floor';
  return table.startsWith('public.') ? undefined : 'relay';
}

/** The byte position of a WAL location `X/Y` (two hex halves of a 64-bit number). */
export function walPosition(lsn: string): bigint {
  const match = /^([0-9A-Fa-f]+)\/([0-9A-Fa-f]+)$/.exec(lsn);
  if (!match) throw new Error(`not a WAL location: "${lsn}"`);
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}

const ZERO: TableStats = { totalBytes: 0, indexBytes: 0, live: 0, dead: 0, updates: 0, hotUpdates: 0, autovacuums: 0, autoanalyzes: 0 };

/** The growth between two snapshots, summed per server over its tables (a table new in `after` grew from nothing). */
export function growthBetween(before: GrowthSnapshot, after: GrowthSnapshot, autovacuumSeen: readonly string[]): WindowGrowth {
  const sides: Partial<Record<ServerName, SideGrowth>> = {};
  const grew = new Map<ServerName, Array<[string, number]>>();
  const dead = new Map<ServerName, Array<[string, number]>>();
  for (const [table, end] of Object.entries(after.tables)) {
    const side = sideOf(table);
    if (!side) continue;
    const start = before.tables[table] ?? ZERO;
    const sum = (sides[side] ??= {
      totalBytes: 0,
      totalBytesDelta: 0,
      indexBytesDelta: 0,
      liveDelta: 0,
      dead: 0,
      deadDelta: 0,
      updatesDelta: 0,
      hotUpdatesDelta: 0,
      autovacuums: 0,
      autoanalyzes: 0,
      grewMost: [],
      deadMost: [],
    });
    sum.totalBytes += end.totalBytes;
    sum.totalBytesDelta += end.totalBytes - start.totalBytes;
    sum.indexBytesDelta += end.indexBytes - start.indexBytes;
    sum.liveDelta += end.live - start.live;
    sum.dead += end.dead;
    sum.deadDelta += end.dead - start.dead;
    sum.updatesDelta += end.updates - start.updates;
    sum.hotUpdatesDelta += end.hotUpdates - start.hotUpdates;
    sum.autovacuums += end.autovacuums - start.autovacuums;
    sum.autoanalyzes += end.autoanalyzes - start.autoanalyzes;
    if (end.totalBytes > start.totalBytes) grew.set(side, [...(grew.get(side) ?? []), [table, end.totalBytes - start.totalBytes]]);
    if (end.dead > 0) dead.set(side, [...(dead.get(side) ?? []), [table, end.dead]]);
  }
  const most = (tables: Array<[string, number]>): Array<[string, number]> => tables.sort((a, b) => b[1] - a[1]).slice(0, 3);
  for (const [side, tables] of grew) sides[side]!.grewMost = most(tables);
  for (const [side, tables] of dead) sides[side]!.deadMost = most(tables);
  return {
    walBytes: Number(walPosition(after.walLsn) - walPosition(before.walLsn)),
    sides,
    autovacuumSeen: [...new Set(autovacuumSeen)].sort(),
    outbox: {
      rows: after.outbox.rows,
      unpublished: after.outbox.unpublished,
      pollIndexBytes: after.outbox.pollIndexBytes,
      pollBlocksPerScan: perRequest(after.outbox.pollBlocks - before.outbox.pollBlocks, after.outbox.pollScans - before.outbox.pollScans),
    },
  };
}

const kB = (bytes: number): string => `${bytes >= 0 ? '+' : ''}${Math.round(bytes / 1024).toLocaleString('en-US')} kB`;

/** A window's growth on one line: WAL, then each server's tables (size, index, dead rows, HOT share of updates, autovacuum runs), the outbox. */
export function growthLine(growth: WindowGrowth): string {
  const sides = Object.entries(growth.sides).map(([side, sum]) => {
    const hot = sum.updatesDelta > 0 ? ` HOT ${sum.hotUpdatesDelta}/${sum.updatesDelta} upd` : '';
    const vacuums = sum.autovacuums || sum.autoanalyzes ? ` autovacuum ${sum.autovacuums} autoanalyze ${sum.autoanalyzes}` : '';
    const deadest = sum.deadMost[0] ? ` (${sum.deadMost[0][1]} in ${sum.deadMost[0][0]})` : '';
    return `${side} ${kB(sum.totalBytesDelta)} (idx ${kB(sum.indexBytesDelta)}) dead ${sum.dead}${deadest}${hot}${vacuums}`;
  });
  const workers = growth.autovacuumSeen.length ? ` · workers: ${growth.autovacuumSeen.join(', ')}` : '';
  const { outbox } = growth;
  const poll = Number.isFinite(outbox.pollBlocksPerScan) ? `, poll ${outbox.pollBlocksPerScan.toFixed(1)} index blocks/scan` : '';
  return `WAL ${kB(growth.walBytes)} · ${sides.join(' · ')} · outbox ${outbox.rows} rows, ${outbox.unpublished} unpublished, unpublished index ${Math.round(outbox.pollIndexBytes / 1024)} kB${poll}${workers}`;
}

const TABLES_SQL = `
SELECT s.schemaname || '.' || s.relname AS "table",
       pg_total_relation_size(s.relid)::float8 AS "totalBytes", pg_indexes_size(s.relid)::float8 AS "indexBytes",
       s.n_live_tup::float8 AS "live", s.n_dead_tup::float8 AS "dead", s.n_tup_upd::float8 AS "updates", s.n_tup_hot_upd::float8 AS "hotUpdates",
       s.autovacuum_count::float8 AS "autovacuums", s.autoanalyze_count::float8 AS "autoanalyzes"
FROM pg_stat_user_tables s`;

const OUTBOX_SQL = `
SELECT (SELECT count(*) FROM "tasks"."outbox_events" WHERE "published_at" IS NULL)::float8 AS "unpublished",
       pg_relation_size(i.indexrelid)::float8 AS "pollIndexBytes", i.idx_scan::float8 AS "pollScans",
       (io.idx_blks_hit + io.idx_blks_read)::float8 AS "pollBlocks"
FROM pg_stat_user_indexes i JOIN pg_statio_user_indexes io USING (indexrelid)
WHERE i.schemaname = 'tasks' AND i.indexrelname = 'outbox_events_unpublished_idx'`;

/** Samples the bench database's growth on `client` (the bench's own session); watches autovacuum workers while a window runs. */
export class PgGrowth {
  constructor(
    private readonly client: pg.Client,
    private readonly pollMs = 200,
  ) {}

  async snapshot(): Promise<GrowthSnapshot> {
    const wal = await this.client.query<{ lsn: string }>(`SELECT pg_current_wal_lsn()::text AS "lsn"`);
    const { rows } = await this.client.query<TableStats & { table: string }>(TABLES_SQL);
    const tables: Record<string, TableStats> = {};
    for (const { table, ...stats } of rows) tables[table] = stats;
    const outbox = tables['tasks.outbox_events']
      ? (await this.client.query<Omit<OutboxSnapshot, 'rows'>>(OUTBOX_SQL)).rows[0]
      : { unpublished: 0, pollIndexBytes: 0, pollScans: 0, pollBlocks: 0 };
    return { walLsn: wal.rows[0].lsn, tables, outbox: { rows: tables['tasks.outbox_events']?.live ?? 0, ...outbox } };
  }

  /** The server's settings that decide whether dead rows are reclaimed during a run (autovacuum is often off on CI machines). */
  async vacuumSettings(): Promise<string> {
    const { rows } = await this.client.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings WHERE name IN ('autovacuum', 'autovacuum_naptime', 'autovacuum_vacuum_scale_factor') ORDER BY name`,
    );
    return rows.map((row) => `${row.name} ${row.setting}`).join(', ');
  }

  /** Runs `work` between two snapshots, noting what the database's autovacuum workers do meanwhile. */
  async around<T>(work: () => Promise<T>): Promise<{ result: T; growth: WindowGrowth }> {
    const before = await this.snapshot();
    const seen: string[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const { rows } = await this.client.query<{ query: string }>(
          `SELECT query FROM pg_stat_activity WHERE backend_type = 'autovacuum worker' AND datname = current_database()`,
        );
        seen.push(...rows.map((row) => row.query.replace(/^autovacuum:\s*/, '').replace(/"/g, '')));
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
      }
    })();
    let result: T;
    try {
      result = await work();
    } finally {
      watching = false;
      await watch.catch(() => undefined);
    }
    const after = await this.snapshot();
    return { result, growth: growthBetween(before, after, seen) };
  }
}
