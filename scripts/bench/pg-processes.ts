/**
 * Which Postgres processes work for whom: the backends connected to the bench database, told apart
 * by application_name (the baselines and the bench set their own; every other backend of the bench
 * database is the relay's), and the postmaster with its background processes (WAL writer,
 * checkpointer, autovacuum…), which serve every database on the server and are reported apart.
 */
import pg from 'pg';
import { readProcStat, type ProcessGroup } from './proc-sampler';

export const BENCH_APPLICATION = 'bench-generator';
export const BASELINE_APPLICATIONS: Record<string, string> = { floor: 'bench-floor', 'sdk-postgres': 'bench-sdk-postgres' };
/** The handoff floor's `tasks` process (`--scenarios upstream`). */
export const HANDOFF_FLOOR_APPLICATION = 'bench-handoff-floor';

interface ActivityRow {
  pid: number;
  datname: string | null;
  application_name: string;
  backend_type: string;
}

export class PgProcesses {
  private rows: ActivityRow[] = [];
  private postmaster: number | undefined;

  constructor(
    private readonly client: pg.Client,
    private readonly database: string,
  ) {}

  /** Reads pg_stat_activity once; the groups answer from this snapshot until the next refresh. */
  async refresh(): Promise<void> {
    const { rows } = await this.client.query<ActivityRow>(`SELECT pid, datname, application_name, backend_type FROM pg_stat_activity`);
    this.rows = rows;
    if (this.postmaster === undefined) {
      const own = rows.find((row) => row.backend_type === 'client backend');
      this.postmaster = own ? readProcStat(own.pid)?.ppid : undefined;
    }
  }

  /** Client backends of the bench database whose application_name is `application`, or (undefined) everyone not named by the bench. */
  backends(application: string | undefined): ProcessGroup['pids'] {
    const named = new Set([BENCH_APPLICATION, HANDOFF_FLOOR_APPLICATION, ...Object.values(BASELINE_APPLICATIONS)]);
    return () =>
      this.rows
        .filter((row) => row.datname === this.database && row.backend_type === 'client backend')
        .filter((row) => (application === undefined ? !named.has(row.application_name) : row.application_name === application))
        .map((row) => row.pid);
  }

  background(): ProcessGroup['pids'] {
    return () => [...(this.postmaster ? [this.postmaster] : []), ...this.rows.filter((row) => row.backend_type !== 'client backend').map((row) => row.pid)];
  }
}
