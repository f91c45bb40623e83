import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AuthModule } from '../auth/auth.module';
import { AdminAuditModule } from './admin-audit.module';
import { AdminAgentsController } from './admin-agents.controller';
import { registerYamlBodyParser } from './yaml-body';

/** The admin API (`/admin/...`, admin token): agents, keys, trust policies, webhook secrets. */
@Module({ imports: [AuthModule, AdminAuditModule], controllers: [AdminAgentsController] })
export class AdminModule implements OnModuleInit {
  constructor(@Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost) {}

  onModuleInit(): void {
    registerYamlBodyParser(this.adapterHost.httpAdapter.getInstance());
  }
}
