import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { AdminAuditModule } from './admin-audit.module';
import { DeliveriesController } from './deliveries.controller';

/** The admin API over the notifier's delivery log. */
@Module({ imports: [AuthModule, AdminAuditModule], controllers: [DeliveriesController] })
export class DeliveriesAdminModule {}
