import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The bytes each org's agents keep stored in handoffs (docs/orgs.md#quotas): every task counts
 * what its sender and its recipient wrote into it (the `size_bytes` of their messages and
 * artifacts), and `org_stored_bytes` keeps each org's sum in a few rows (shards, summed on read)
 * that every write and retention delete moves in its own statement. Existing data is counted
 * here: messages by their author; artifacts, whose writer was not recorded, to the sender when
 * written with the handoff's create, else to the recipient. The ALTER of the tasks table holds
 * every write until the counts are made, so none is missed.
 */
export class OrgStoredBytes1765870000000 implements MigrationInterface {
  name = 'OrgStoredBytes1765870000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "sender_stored_bytes" bigint NOT NULL DEFAULT '0'`);
    await runner.query(`ALTER TABLE "tasks"."tasks" ADD "recipient_stored_bytes" bigint NOT NULL DEFAULT '0'`);
    await runner.query(
      `CREATE TABLE "tasks"."org_stored_bytes" ("org" character varying(127) NOT NULL, "shard" smallint NOT NULL, "bytes" bigint NOT NULL DEFAULT '0',
        CONSTRAINT "org_stored_bytes_shard_range" CHECK ("shard" BETWEEN 0 AND 15), CONSTRAINT "org_stored_bytes_pkey" PRIMARY KEY ("org", "shard"))`,
    );
    await runner.query(
      `UPDATE "tasks"."tasks" t SET "sender_stored_bytes" = w."sender", "recipient_stored_bytes" = w."recipient"
       FROM (
         SELECT x."task_id", sum(x."sender")::bigint AS "sender", sum(x."recipient")::bigint AS "recipient" FROM (
           SELECT m."task_id", CASE WHEN m."author" = 'sender' THEN m."size_bytes" ELSE 0 END AS "sender",
                  CASE WHEN m."author" = 'sender' THEN 0 ELSE m."size_bytes" END AS "recipient"
           FROM "tasks"."messages" m
           UNION ALL
           SELECT a."task_id", CASE WHEN a."created_at" = o."created_at" THEN a."size_bytes" ELSE 0 END,
                  CASE WHEN a."created_at" = o."created_at" THEN 0 ELSE a."size_bytes" END
           FROM "tasks"."artifacts" a JOIN "tasks"."tasks" o ON o."id" = a."task_id"
         ) x GROUP BY x."task_id"
       ) w WHERE t."id" = w."task_id"`,
    );
    await runner.query(
      `INSERT INTO "tasks"."org_stored_bytes" ("org", "shard", "bytes")
       SELECT s."org", 0, sum(s."bytes")::bigint FROM (
         SELECT split_part("sender_handle", '@', 2) AS "org", "sender_stored_bytes" AS "bytes" FROM "tasks"."tasks"
         UNION ALL
         SELECT split_part("recipient_handle", '@', 2), "recipient_stored_bytes" FROM "tasks"."tasks"
       ) s GROUP BY s."org"`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TABLE "tasks"."org_stored_bytes"`);
    await runner.query(`ALTER TABLE "tasks"."tasks" DROP COLUMN "recipient_stored_bytes", DROP COLUMN "sender_stored_bytes"`);
  }
}
