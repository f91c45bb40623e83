import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { SecretCipher, type SealedColumn } from '@app/secrets';
import { generateWebhookSecret } from '../deliveries/standard-webhooks';
import { WebhookSecretEntity } from './webhook-secret.entity';

/** Stored sealed (AES-256-GCM under RELAY_SECRET_KEYS). */
export const WEBHOOK_SECRET_SEALED_COLUMNS: SealedColumn[] = [{ table: '"notifier"."webhook_secrets"', keyColumns: ['handle'], column: 'secret', kind: 'text' }];

/**
 * The per-agent webhook signing secrets. The notifier must sign with them, so they are stored
 * sealed with a key of its own (not hashed); they are returned only by `rotate` and never logged.
 */
@Injectable()
export class WebhookSecretsService {
  private readonly logger = new Logger(WebhookSecretsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
  ) {}

  /** Makes a new secret for the handle, replacing any previous one at once. */
  async rotate(handle: string): Promise<string> {
    const secret = generateWebhookSecret();
    await this.dataSource.query(
      `INSERT INTO "notifier"."webhook_secrets" ("handle", "secret") VALUES ($1, $2)
       ON CONFLICT ("handle") DO UPDATE SET "secret" = EXCLUDED."secret", "rotated_at" = now()`,
      [handle, this.cipher.seal(secret)],
    );
    this.logger.log({ handle }, 'webhook secret rotated');
    return secret;
  }

  async secretOf(handle: string): Promise<string | null> {
    const row = await this.dataSource.getRepository(WebhookSecretEntity).findOne({ select: { secret: true }, where: { handle } });
    return row ? this.cipher.open(row.secret) : null;
  }
}
