import {
  Controller,
  Get,
  Inject,
  Injectable,
  Logger,
  Query,
  Req,
  SetMetadata,
  UseFilters,
  UseGuards,
  UsePipes,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { from, mergeMap, type Observable } from 'rxjs';
import { ADMIN_AUDIT_SUBJECTS, isValidHandle, ListAdminAuditRequest, normalizeHandle, ORG_PATTERN, orgOf, type AdminAuditPage } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { LeastRole } from '../admin-roles';
import { adminPrincipalOf, AdminTokenGuard } from '../sign-in/admin-token.guard';
import type { ConsolePerson } from '../sign-in/console-sessions';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';

/** Who an audit row names: the actor (`admin token`, `console:<session>`) and the person of an OIDC session. */
export interface AuditActor {
  actor: string;
  person: ConsolePerson | null;
}

/** Writes admin audit rows (kept by the directory): who changed what through the admin API. */
@Injectable()
export class AdminAudit {
  private readonly logger = new Logger(AdminAudit.name);

  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  /**
   * Records a change that was made. The change is not undone when the row cannot be written (the
   * directory is down): that is logged as an error with what the row would have said.
   */
  async record(who: AuditActor, action: string, target?: string, detail?: Record<string, unknown>, org?: string | null): Promise<void> {
    const { actor, person } = who;
    try {
      await this.rpc.request(ADMIN_AUDIT_SUBJECTS.record, {
        actor,
        ...(person ? { actor_sub: person.sub, ...(person.email ? { actor_email: person.email } : {}) } : {}),
        action,
        ...(target !== undefined ? { target } : {}),
        ...(detail ? { detail } : {}),
        ...(org ? { org } : {}),
      });
    } catch (error) {
      this.logger.error({ err: error, actor, action, target }, 'admin audit row not written');
    }
  }
}

const AUDITED = 'agentrelay:admin-audited';

/**
 * The org of an audited change, so that the org's auditors read it: the agent of a `:handle` route
 * or the one registered, the org of an orgs route, the agent a redelivered delivery notifies; null
 * (the relay's) for anything else.
 */
export function auditedOrgOf(params: Record<string, string>, result: unknown): string | null {
  const reply = (result ?? {}) as { agent?: { handle?: unknown }; target_handle?: unknown };
  const handle = normalizeHandle(params.handle ?? reply.agent?.handle ?? reply.target_handle);
  if (isValidHandle(handle)) return orgOf(handle);
  if (params.name !== undefined && ORG_PATTERN.test(params.name.toLowerCase())) return params.name.toLowerCase();
  return null;
}

interface AuditedRoute {
  action: string;
  /** The route param that names what was changed. */
  targetParam?: string;
  /** What of the reply goes into the row's detail (never a secret). */
  detail?: (result: unknown, body: unknown) => Record<string, unknown> | undefined;
}

/** Marks an admin route as a change: once it succeeds, an audit row names its actor, action and target. */
export function Audited(action: string, targetParam?: string, detail?: AuditedRoute['detail']): MethodDecorator {
  return SetMetadata(AUDITED, { action, targetParam, detail } satisfies AuditedRoute);
}

@Injectable()
export class AdminAuditInterceptor implements NestInterceptor {
  constructor(
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(AdminAudit) private readonly audit: AdminAudit,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const route = this.reflector.get<AuditedRoute | undefined>(AUDITED, context.getHandler());
    if (!route) return next.handle();
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const params = (request.params ?? {}) as Record<string, string>;
    const target = route.targetParam ? params[route.targetParam] : undefined;
    return next
      .handle()
      .pipe(
        mergeMap((result: unknown) =>
          from(
            this.audit
              .record(adminPrincipalOf(request), route.action, target, route.detail?.(result, request.body), auditedOrgOf(params, result))
              .then(() => result),
          ),
        ),
      );
  }
}

/** `GET /admin/audit?limit=&cursor=`: the admin audit log, newest first. */
@Controller('admin/audit')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
export class AdminAuditController {
  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  @Get()
  list(@Query() query: ListAdminAuditRequest, @Req() request: FastifyRequest): Promise<AdminAuditPage> {
    const { orgs } = adminPrincipalOf(request);
    return this.rpc.request(ADMIN_AUDIT_SUBJECTS.list, { ...query, orgs: orgs === 'all' ? undefined : orgs });
  }
}
