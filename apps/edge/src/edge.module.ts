import { Global, Module, type DynamicModule } from '@nestjs/common';
import { AdminModule } from './admin/admin.module';
import { DeliveriesAdminModule } from './admin/deliveries-admin.module';
import { CardsModule } from './cards/cards.module';
import { DirectoryLookupsModule } from './directory/directory-lookups.module';
import { EdgeConfig } from './edge.config';
import { HealthModule } from './health/health.module';
import { JsonRpcModule } from './jsonrpc/json-rpc.module';
import { MessagingModule } from './messaging/messaging.module';

@Global()
@Module({})
export class EdgeModule {
  static forRoot(config: EdgeConfig): DynamicModule {
    return {
      module: EdgeModule,
      imports: [MessagingModule, DirectoryLookupsModule, HealthModule, AdminModule, DeliveriesAdminModule, CardsModule, JsonRpcModule],
      providers: [{ provide: EdgeConfig, useValue: config }],
      exports: [EdgeConfig],
    };
  }
}
