import { setTimeout as sleep } from 'node:timers/promises';
import { DataSource, MigrationExecutor, type DataSourceOptions, type MixedList, type EntitySchema, type QueryRunner } from 'typeorm';
import { SnakeNamingStrategy } from './snake-naming.strategy';

export interface ServiceDataSourceSpec {
  /** Postgres schema the service owns. */
  schema: string;
  url: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
  poolSize?: number;
  /** Longest a statement may run before Postgres cancels it (0: no limit), so one slow query cannot hold a connection. */
  statementTimeoutMs?: number;
}

/** One data source per service: its own schema, its own migrations table, never `synchronize`. */
export function serviceDataSourceOptions(spec: ServiceDataSourceSpec): DataSourceOptions {
  return {
    type: 'postgres',
    url: spec.url,
    schema: spec.schema,
    entities: spec.entities,
    migrations: spec.migrations,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    migrationsRun: false,
    logging: ['error'],
    namingStrategy: new SnakeNamingStrategy(),
    extra: { max: spec.poolSize ?? 10, application_name: `agentrelay-${spec.schema}`, statement_timeout: spec.statementTimeoutMs ?? 0 },
  };
}

/** Advisory-lock key shared by every process that migrates, so replicas never migrate at once. */
const MIGRATION_LOCK_KEY = 727_272_001;

/** How often a process waiting for another's migrations asks for the lock again. */
const MIGRATION_LOCK_RETRY_MS = 100;

/**
 * Takes the migration lock by asking for it until it is free, never by waiting inside a statement:
 * a statement waiting for the lock holds a snapshot, and a migration that builds an index
 * CONCURRENTLY waits for every older snapshot to end, so the migrating process and the waiting one
 * would wait on each other until Postgres broke the deadlock by failing the waiter.
 */
async function takeMigrationLock(runner: QueryRunner): Promise<void> {
  for (;;) {
    const rows: Array<{ locked: boolean }> = await runner.query('SELECT pg_try_advisory_lock($1) AS "locked"', [MIGRATION_LOCK_KEY]);
    if (rows[0]?.locked) return;
    await sleep(MIGRATION_LOCK_RETRY_MS);
  }
}

/**
 * Creates the service's schema if needed and applies pending migrations, holding a Postgres
 * advisory lock so that several replicas starting together migrate once.
 */
export async function migrateServiceSchema(dataSource: DataSource): Promise<string[]> {
  const schema = (dataSource.options as { schema?: string }).schema;
  if (!schema) throw new Error('The data source has no schema');
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    // Waiting for another replica's migrations, and a migration itself, may take longer than the pool's statement timeout.
    await runner.query('SET statement_timeout = 0');
    await takeMigrationLock(runner);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'each';
    const applied = await executor.executePendingMigrations();
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    // The connection goes back to the pool: back to the pool's statement timeout.
    await runner.query('RESET statement_timeout').catch(() => undefined);
    await runner.release();
  }
}
