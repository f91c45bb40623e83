import { Global, Inject, Injectable, Logger, Module, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { resealColumns, type SealedColumn } from './reseal';
import { SecretCipher } from './secret-cipher';

export const SEALED_COLUMNS = Symbol('SEALED_COLUMNS');

/**
 * At start, seals what is still in clear (rows written before encryption) or sealed with a key
 * that is no longer the first one, so adding a key in front and restarting re-encrypts everything.
 */
@Injectable()
export class SecretResealer implements OnApplicationBootstrap {
  private readonly logger = new Logger(SecretResealer.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    @Inject(SEALED_COLUMNS) private readonly columns: SealedColumn[],
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const result of await resealColumns(this.dataSource, this.cipher, this.columns)) {
      if (result.resealed > 0)
        this.logger.log(
          { table: result.table, column: result.column, resealed: result.resealed, key_id: this.cipher.primaryKeyId },
          'sealed stored secrets with the current key',
        );
      if (result.unreadable > 0) {
        this.logger.error(
          { table: result.table, column: result.column, unreadable: result.unreadable },
          'stored secrets sealed with a key RELAY_SECRET_KEYS does not list',
        );
      }
    }
  }
}

/** The service's secret cipher (from RELAY_SECRET_KEYS, validated by its config) and the start-up resealing. */
@Global()
@Module({})
export class SecretsModule {
  static forRoot(secretKeys: string, sealedColumns: SealedColumn[]): DynamicModule {
    return {
      module: SecretsModule,
      providers: [
        { provide: SecretCipher, useValue: SecretCipher.fromConfig(secretKeys) },
        { provide: SEALED_COLUMNS, useValue: sealedColumns },
        SecretResealer,
      ],
      exports: [SecretCipher],
    };
  }
}
