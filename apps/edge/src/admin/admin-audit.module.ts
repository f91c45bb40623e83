import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { AdminAudit, AdminAuditController, AdminAuditInterceptor } from './admin-audit';

/** The admin audit: rows written after each admin change, and `GET /admin/audit`. */
@Module({
  imports: [AuthModule],
  controllers: [AdminAuditController],
  providers: [AdminAudit, AdminAuditInterceptor],
  exports: [AdminAudit, AdminAuditInterceptor],
})
export class AdminAuditModule {}
