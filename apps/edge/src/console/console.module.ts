import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AdminAuditModule } from '../admin/admin-audit.module';
import { AdminEventLimits } from '../admin/admin-event-limits';
import { AdminEventsController, AdminEventStreams } from '../admin/admin-events';
import { AdminTasksController } from '../admin/admin-tasks.controller';
import { AuthModule } from '../auth/auth.module';
import { EndpointModule } from '../endpoint/endpoint.module';
import { EdgeConfig } from '../edge.config';
import { StreamsModule } from '../streams/streams.module';
import { AdminSessionController } from './admin-session.controller';
import { ConsoleOidc } from './console-oidc';
import { registerConsoleStatic } from './console-static';

/**
 * The operator console: its static files under `/console/`, its sign-in (`/admin/session`, with the
 * admin token or through OIDC) and the
 * admin reads it shows (tasks across all agents, search, counts, the overview, the live events).
 */
@Module({
  imports: [AuthModule, AdminAuditModule, StreamsModule, EndpointModule],
  controllers: [AdminSessionController, AdminTasksController, AdminEventsController],
  providers: [AdminEventStreams, AdminEventLimits, ConsoleOidc],
})
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
