import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { RelayError } from '@app/contracts';
import { isWebhookSecret, SecretCipher, type SealedColumn } from '@app/secrets';

/** Stored sealed (AES-256-GCM under RELAY_SECRET_KEYS). */
export const WEBHOOK_SECRET_SEALED_COLUMNS: SealedColumn[] = [
  { table: '"notifier"."webhook_secrets"', keyColumns: ['handle'], column: 'secret', kind: 'text' },
];

/**
 * The per-agent webhook signing secrets. The notifier must sign with them, so they are stored
 * sealed with a key of its own (not hashed); they arrive sealed to the notifier's key, are never returned and never logged.
 * The delivery worker reads them, sealed, with each lease of deliveries and opens them to sign.
 */
@Injectable()
export class WebhookSecretsService {
  private readonly logger = new Logger(WebhookSecretsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  /**
   * Stores the handle's new secret (made by the caller, which shows it once), replacing any previous
   * one at once (at registration: a leftover of a registration that was rolled back). A request past
   * its `notAfter` (it waited in a stalled process while its caller gave up) is refused: nobody would
   * be shown that secret.
   */
  async rotate(handle: string, secret: string, notAfter?: string): Promise<void> {
    if (notAfter !== undefined && Date.now() > Date.parse(notAfter)) {
      this.logger.warn({ handle, not_after: notAfter }, 'refused a webhook secret request that arrived after its caller gave up');
      throw new RelayError('service_timeout', 'The webhook secret request arrived too late; nothing was changed', { service: 'notifier' });
    }
    if (!isWebhookSecret(secret))
      throw new RelayError('invalid_params', 'sealed_webhook_secret: must hold whsec_ and the base64 of 24 to 64 bytes', { field: 'sealed_webhook_secret' });
    await this.dataSource.query(
      `INSERT INTO "notifier"."webhook_secrets" ("handle", "secret") VALUES ($1, $2)
       ON CONFLICT ("handle") DO UPDATE SET "secret" = EXCLUDED."secret", "rotated_at" = now()`,
      [handle, this.cipher.seal(secret)],
    );
    this.logger.log({ handle }, 'webhook secret rotated');
  }
}
