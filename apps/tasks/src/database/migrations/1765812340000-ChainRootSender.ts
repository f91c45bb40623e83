import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The sender of a chain's root on each handoff below it (docs/chains.md#who-asked-signed): the
 * assertion every delivery carries names on whose behalf the chain runs. A root stores none (its
 * own sender is); the handoffs linked before are filled in from their root while it is still kept.
 */
export class ChainRootSender1765812340000 implements MigrationInterface {
  name = 'ChainRootSender1765812340000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "root_sender_handle" varchar(255)`);
    await runner.query(
      `UPDATE "tasks"."tasks" t SET "root_sender_handle" = r."sender_handle" FROM "tasks"."tasks" r WHERE t."root_task_id" = r."id" AND t."root_sender_handle" IS NULL`,
    );
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD CONSTRAINT "tasks_root_sender" CHECK ("root_task_id" IS NOT NULL OR "root_sender_handle" IS NULL)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP CONSTRAINT "tasks_root_sender"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "root_sender_handle"`);
  }
}
