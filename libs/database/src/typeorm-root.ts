import { Logger, type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { migrateServiceSchema } from './data-source.factory';

/** TypeORM root module of one service; applies pending migrations at start when asked to. */
export function serviceTypeOrmRoot(options: DataSourceOptions, migrateOnStart: boolean): DynamicModule {
  return TypeOrmModule.forRootAsync({
    useFactory: () => options,
    dataSourceFactory: async (resolved) => {
      const dataSource = await new DataSource(resolved ?? options).initialize();
      if (migrateOnStart) {
        const applied = await migrateServiceSchema(dataSource);
        if (applied.length > 0) new Logger('Migrations').log(`applied ${applied.join(', ')}`);
      }
      return dataSource;
    },
  });
}
