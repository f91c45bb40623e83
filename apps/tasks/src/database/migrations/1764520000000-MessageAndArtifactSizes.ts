import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The size in bytes of every message and artifact, written with it, so that a read can keep to a
 * reply's budget and a write to a thread's artifact cap without loading the content to measure it.
 */
export class MessageAndArtifactSizes1764520000000 implements MigrationInterface {
  name = 'MessageAndArtifactSizes1764520000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."messages" ADD "size_bytes" integer NOT NULL DEFAULT '0'`);
    await runner.query(`ALTER TABLE "tasks"."artifacts" ADD "size_bytes" integer NOT NULL DEFAULT '0'`);
    await runner.query(`UPDATE "tasks"."messages" SET "size_bytes" = octet_length("body") + octet_length("parts"::text) + octet_length("payload"::text)`);
    await runner.query(
      `UPDATE "tasks"."artifacts" SET "size_bytes" = octet_length("fields"::text) + octet_length("parts"::text) + octet_length("metadata"::text)
         + COALESCE(octet_length("name"), 0) + COALESCE(octet_length("description"), 0)`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."artifacts" DROP COLUMN "size_bytes"`);
    await runner.query(`ALTER TABLE "tasks"."messages" DROP COLUMN "size_bytes"`);
  }
}
