import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { notifierDataSourceOptions } from '../../../apps/notifier/src/database/data-source';

/** A connection to the medium tier's database as the notifier opens it, its schema migrated. */
export async function openNotifierDatabase(): Promise<DataSource> {
  const url = process.env.RELAY_MEDIUM_DATABASE_URL;
  if (!url) throw new Error('RELAY_MEDIUM_DATABASE_URL is not set: run the medium tests through jest (global setup creates it)');
  Logger.overrideLogger(['warn', 'error']);
  const dataSource = await new DataSource(notifierDataSourceOptions(url)).initialize();
  await migrateServiceSchema(dataSource);
  return dataSource;
}
