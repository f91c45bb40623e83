import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The media types an agent accepts in the parts sent to it; null keeps the relay's default. */
export class AddAgentInputModes1764900000000 implements MigrationInterface {
  name = 'AddAgentInputModes1764900000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" ADD "input_modes" text array`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "directory"."agents" DROP COLUMN "input_modes"`);
  }
}
