import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Webhook secrets are stored sealed (`v1:<key id>:<iv>:<ciphertext>`): the format check admits
 * both forms, so rows in clear stay valid until the notifier seals them at start (it needs the key).
 */
export class SealWebhookSecrets1764531800000 implements MigrationInterface {
  name = 'SealWebhookSecrets1764531800000';

  async up(runner: QueryRunner): Promise<void> {
    await runner.query(`ALTER TABLE "notifier"."webhook_secrets" DROP CONSTRAINT "webhook_secrets_format"`);
    await runner.query(
      `ALTER TABLE "notifier"."webhook_secrets" ADD CONSTRAINT "webhook_secrets_format" CHECK ("secret" ~ '^(whsec_[A-Za-z0-9+/=]{32,}|v1:[A-Za-z0-9_-]{1,32}:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22,})$')`,
    );
  }

  async down(runner: QueryRunner): Promise<void> {
    // Sealed rows cannot satisfy the old check without the key: they are removed (a secret is made again by rotating).
    await runner.query(`DELETE FROM "notifier"."webhook_secrets" WHERE "secret" !~ '^whsec_'`);
    await runner.query(`ALTER TABLE "notifier"."webhook_secrets" DROP CONSTRAINT "webhook_secrets_format"`);
    await runner.query(`ALTER TABLE "notifier"."webhook_secrets" ADD CONSTRAINT "webhook_secrets_format" CHECK ("secret" ~ '^whsec_[A-Za-z0-9+/=]{32,}$')`);
  }
}
