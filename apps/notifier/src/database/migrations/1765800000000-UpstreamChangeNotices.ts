import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Every change of an upstream agent's credential, client identity or accepted card names the
 * agent on the `agentrelay_upstream_changed` channel as it commits: each notifier replica drops
 * the client it keeps for that agent and makes it again from the tables at the next request.
 */
export class UpstreamChangeNotices1765800000000 implements MigrationInterface {
  name = 'UpstreamChangeNotices1765800000000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      CREATE FUNCTION "notifier"."upstream_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_OP = 'DELETE' THEN
          PERFORM pg_notify('agentrelay_upstream_changed', OLD."handle");
        ELSE
          PERFORM pg_notify('agentrelay_upstream_changed', NEW."handle");
        END IF;
        RETURN NULL;
      END
      $$`);
    await runner.query(
      `CREATE TRIGGER "upstream_credentials_changed" AFTER INSERT OR UPDATE OR DELETE ON "notifier"."upstream_credentials"
       FOR EACH ROW EXECUTE FUNCTION "notifier"."upstream_changed"()`,
    );
    await runner.query(
      `CREATE TRIGGER "upstream_tls_changed" AFTER INSERT OR UPDATE OR DELETE ON "notifier"."upstream_tls"
       FOR EACH ROW EXECUTE FUNCTION "notifier"."upstream_changed"()`,
    );
    await runner.query(
      `CREATE TRIGGER "upstream_accepted_card_added" AFTER INSERT ON "notifier"."upstream_agents"
       FOR EACH ROW WHEN (NEW."accepted" IS NOT NULL) EXECUTE FUNCTION "notifier"."upstream_changed"()`,
    );
    await runner.query(
      `CREATE TRIGGER "upstream_accepted_card_changed" AFTER UPDATE OF "accepted" OR DELETE ON "notifier"."upstream_agents"
       FOR EACH ROW EXECUTE FUNCTION "notifier"."upstream_changed"()`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    await runner.query(`DROP TRIGGER "upstream_accepted_card_changed" ON "notifier"."upstream_agents"`);
    await runner.query(`DROP TRIGGER "upstream_accepted_card_added" ON "notifier"."upstream_agents"`);
    await runner.query(`DROP TRIGGER "upstream_tls_changed" ON "notifier"."upstream_tls"`);
    await runner.query(`DROP TRIGGER "upstream_credentials_changed" ON "notifier"."upstream_credentials"`);
    await runner.query(`DROP FUNCTION "notifier"."upstream_changed"()`);
  }
}
