import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Push notifications from upstream agents: the hash of the token the relay gave each task's receiver. */
export class UpstreamPush1765270000000 implements MigrationInterface {
  name = 'UpstreamPush1765270000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."upstream_tasks" ADD "push_token_hash" varchar(64)`);
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."upstream_tasks" DROP COLUMN "push_token_hash"`);
  }
}
