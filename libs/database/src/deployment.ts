import type { Provider } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, type DataSource, type QueryRunner } from 'typeorm';
import { ulid } from 'ulid';

/** The schema every service of a relay database shares: what belongs to the deployment, not to one service. */
export const DEPLOYMENT_SCHEMA = 'relay';

/**
 * One row: the id of this relay deployment, made once per database by the first service migrated.
 * Every service reads it at start; the event stream and the health answers carry it, so that two
 * relays on one NATS under the same subject prefix are told apart (docs/architecture.md#subjects).
 */
@Entity({ schema: DEPLOYMENT_SCHEMA, name: 'deployment' })
@Check('deployment_one_row', `"id" = 1`)
export class DeploymentEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'deployment_pkey' })
  id: number;

  /** A ULID. */
  @Column({ type: 'varchar', length: 26 })
  deploymentId: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}

/**
 * The migration step each service runs (every service may be migrated alone, whichever comes
 * first): the shared table, and a new id only when the database has none yet.
 */
export async function createDeploymentRow(runner: QueryRunner): Promise<void> {
  await runner.query(`CREATE SCHEMA IF NOT EXISTS "${DEPLOYMENT_SCHEMA}"`);
  await runner.query(
    `CREATE TABLE IF NOT EXISTS "${DEPLOYMENT_SCHEMA}"."deployment" ("id" smallint NOT NULL, "deployment_id" character varying(26) NOT NULL,
       "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "deployment_one_row" CHECK ("id" = 1), CONSTRAINT "deployment_pkey" PRIMARY KEY ("id"))`,
  );
  await runner.query(`INSERT INTO "${DEPLOYMENT_SCHEMA}"."deployment" ("id", "deployment_id") VALUES (1, $1) ON CONFLICT DO NOTHING`, [ulid()]);
}

/** The deployment id of the database (its migrations have run). */
export async function readDeploymentId(dataSource: DataSource): Promise<string> {
  let rows: Array<{ deployment_id: string }>;
  try {
    rows = (await dataSource.query(`SELECT "deployment_id" FROM "${DEPLOYMENT_SCHEMA}"."deployment" WHERE "id" = 1`)) as Array<{ deployment_id: string }>;
  } catch (error) {
    if ((error as { code?: string }).code !== '42P01') throw error;
    rows = [];
  }
  if (!rows[0])
    throw new Error(
      `the database has no deployment id (table ${DEPLOYMENT_SCHEMA}.deployment): run the migrations (npm run migration:run, or RELAY_MIGRATE_ON_START=true)`,
    );
  return rows[0].deployment_id;
}

/** The injection token of the deployment id this service's database holds. */
export const DEPLOYMENT_ID = Symbol('DEPLOYMENT_ID');

/**
 * The deployment id, for whoever injects DEPLOYMENT_ID: `configured` (RELAY_DEPLOYMENT_ID, for a
 * deployment whose services keep their schemas in separate databases) or else the one the
 * service's database holds, read once as the service starts (after its migrations).
 */
export function deploymentIdProvider(configured?: string): Provider {
  if (configured) return { provide: DEPLOYMENT_ID, useValue: configured };
  return { provide: DEPLOYMENT_ID, inject: [getDataSourceToken()], useFactory: (dataSource: DataSource) => readDeploymentId(dataSource) };
}
