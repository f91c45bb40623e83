import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AdminAuditModule } from '../admin/admin-audit.module';
import { AuthModule } from '../auth/auth.module';
import { EdgeConfig } from '../edge.config';
import { AdminSessionController } from './admin-session.controller';
import { registerConsoleStatic } from './console-static';

/** The operator console: its static files under `/console/` and its sign-in (`/admin/session`). */
@Module({ imports: [AuthModule, AdminAuditModule], controllers: [AdminSessionController] })
export class ConsoleModule implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Admin answers name agents, tasks and sessions: no cache may keep them.
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.url === '/admin' || request.url.startsWith('/admin/') || request.url.startsWith('/admin?')) reply.header('cache-control', 'no-store');
      done();
    });
    registerConsoleStatic(fastify, this.config.RELAY_CONSOLE_DIR);
  }
}
