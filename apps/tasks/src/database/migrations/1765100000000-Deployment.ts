import type { MigrationInterface, QueryRunner } from 'typeorm';
import { createDeploymentRow } from '@app/database';

/**
 * The deployment id of the database, in the schema the services share (libs/database deployment.ts);
 * tasks, directory and notifier each run this, the first one migrated makes the id. Down leaves the
 * table: the other services read it.
 */
export class Deployment1765100000000 implements MigrationInterface {
  name = 'Deployment1765100000000';

  async up(runner: QueryRunner): Promise<void> {
    await createDeploymentRow(runner);
  }

  async down(): Promise<void> {}
}
