import { Module } from '@nestjs/common';
import { AdminAuditModule } from '../admin/admin-audit.module';
import { AuthModule } from '../auth/auth.module';
import { ApprovalsController } from './approvals.controller';

/** The approvals queue of the admin API: held handoffs and the people's decisions on them. */
@Module({ imports: [AuthModule, AdminAuditModule], controllers: [ApprovalsController] })
export class ApprovalsModule {}
