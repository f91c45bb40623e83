import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { NotifierSealer } from '@app/secrets';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import { AuthModule } from '../auth/auth.module';
import { EdgeConfig } from '../edge.config';
import { EndpointModule } from '../endpoint/endpoint.module';
import { StreamsModule } from '../streams/streams.module';
import { AdminAgentsController } from './agents/admin-agents.controller';
import { registerYamlBodyParser } from './agents/yaml-body';
import { ApprovalsController } from './approvals/approvals.controller';
import { AdminAudit, AdminAuditController, AdminAuditInterceptor } from './audit/admin-audit';
import { registerConsoleStatic } from './console-static';
import { DeliveriesController } from './deliveries/deliveries.controller';
import { AdminEventLimits } from './events/admin-event-limits';
import { AdminEventsController, AdminEventStreams } from './events/admin-events';
import { AdminSessionController } from './sign-in/admin-session.controller';
import { AdminTokenGuard } from './sign-in/admin-token.guard';
import { ConsoleOidc } from './sign-in/console-oidc';
import { ConsoleSessions } from './sign-in/console-sessions';
import { AdminTasksController } from './tasks/admin-tasks.controller';
import { AdminOrgsController } from './orgs/admin-orgs.controller';
import { AdminPeopleController } from './orgs/admin-people.controller';
import { OrgScope } from './org-scope/org-scope';

/**
 * What operators use, behind the admin token or a console session: the admin API (`/admin/...`:
 * agents, keys, trust policies, webhook secrets, tasks across all agents, search, deliveries,
 * approvals, the audit, live events), its sign-in (`/admin/session`, with the admin token or
 * through OIDC) and the console's static files under `/console/`.
 */
@Module({
  imports: [AuthModule, StreamsModule, EndpointModule],
  controllers: [
    AdminSessionController,
    AdminAgentsController,
    AdminTasksController,
    AdminEventsController,
    DeliveriesController,
    ApprovalsController,
    AdminAuditController,
    AdminOrgsController,
    AdminPeopleController,
  ],
  providers: [
    AdminTokenGuard,
    OrgScope,
    ConsoleSessions,
    ConsoleOidc,
    AdminAudit,
    AdminAuditInterceptor,
    AdminEventStreams,
    AdminEventLimits,
    { provide: NotifierSealer, inject: [EdgeConfig], useFactory: (config: EdgeConfig) => new NotifierSealer(config.RELAY_NOTIFIER_PUBLIC_KEY) },
  ],
})
export class OperatorModule implements OnModuleInit {
  constructor(
    @Inject(HttpAdapterHost) private readonly adapterHost: HttpAdapterHost,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    registerYamlBodyParser(fastify);
    // Admin answers name agents, tasks and sessions: no cache may keep them.
    fastify.addHook('onRequest', (request, reply, done) => {
      if (request.url === '/admin' || request.url.startsWith('/admin/') || request.url.startsWith('/admin?')) reply.header('cache-control', 'no-store');
      done();
    });
    registerConsoleStatic(fastify, this.config.RELAY_CONSOLE_DIR);
  }
}
