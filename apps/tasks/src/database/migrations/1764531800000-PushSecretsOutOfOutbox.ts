import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push-config events no longer carry the config's token or credentials (the notifier asks the
 * tasks service for them): removes them from the events already in the outbox. The configs' own
 * columns are sealed by the service at start, which needs the key.
 */
export class PushSecretsOutOfOutbox1764531800000 implements MigrationInterface {
  name = 'PushSecretsOutOfOutbox1764531800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`
      UPDATE "tasks"."outbox_events"
         SET "payload" = ("payload" - 'token' - 'authentication')
       WHERE "type" IN ('push_config_set', 'push_config_deleted') AND ("payload" ? 'token' OR "payload" ? 'authentication')`);
  }

  async down(): Promise<void> {
    // The removed secrets are not kept anywhere else in the outbox; nothing to restore.
  }
}
