import { Controller, Get, Inject, Param, Query, Req, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import {
  ADMIN_AUDIT_SUBJECTS,
  ADMIN_DELIVERIES_SUBJECTS,
  ADMIN_TASKS_SUBJECTS,
  DIRECTORY_SUBJECTS,
  HandleRequest,
  normalizeHandle,
  orgOf,
  RelayError,
  TASK_LIMITS,
  type AdminCountsReply,
  type AdminSearchPage,
  type AdminTaskChain,
  type AdminTaskDetail,
  type AdminTaskFilter,
  type AdminTaskPage,
  type AdminOverview,
  NOTIFIER_SUBJECTS,
  type UpstreamCallsReply,
  type WithHiddenBodies,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { hidesBodies, LeastRole } from '../admin-roles';
import { adminPrincipalOf, AdminTokenGuard } from '../sign-in/admin-token.guard';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { AdminSearchQuery, AdminTaskChainQuery, AdminTaskFilterQuery, AdminTasksQuery } from './admin-tasks.dto';
import { listScopeOf, type ListScope } from '../org-scope/org-filter';
import { chainRefusalOf } from './chain-refusal';
import { chainForOrgs } from './chain-scope';
import { hideChain, hideDetail, hidePage } from './hidden-bodies';

/** The operator console's reads across all agents: tasks, one task's timeline, search, counts, the overview. */
@Controller('admin')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
export class AdminTasksController {
  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  /** `GET /admin/tasks?agent=&role=&state=&intent=&context_id=&created_after=&created_before=&limit=&cursor=`, newest first. */
  @Get('tasks')
  async list(@Query() query: AdminTasksQuery, @Req() request: FastifyRequest): Promise<WithHiddenBodies<AdminTaskPage>> {
    const scope = await listScopeOf(this.rpc, adminPrincipalOf(request), query.org);
    const page = await this.rpc.request(ADMIN_TASKS_SUBJECTS.list, {
      ...(await this.filter(query, scope)),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
    });
    return hidesBodies(scope.role) ? hidePage(page) : page;
  }

  /** `GET /admin/tasks/{id}`: the task, its timeline (from the event log) and its transition audit. */
  @Get('tasks/:id')
  async get(@Param('id') id: string, @Req() request: FastifyRequest): Promise<WithHiddenBodies<AdminTaskDetail>> {
    if (id.length > TASK_LIMITS.taskIdChars) throw new RelayError('task_not_found', `No task with id ${id.slice(0, 64)}…`, { task_id: id.slice(0, 64) });
    const detail = await this.rpc.request(ADMIN_TASKS_SUBJECTS.get, { task_id: id });
    return hidesBodies(adminPrincipalOf(request).role) ? hideDetail(detail) : detail;
  }

  /**
   * `GET /admin/tasks/{id}/chain?limit=`: the handoff's chain (the path from its root to it, its
   * children, the tree from the root down, bounded) and the handoffs the chain's bounds refused.
   */
  @Get('tasks/:id/chain')
  async chain(@Param('id') id: string, @Query() query: AdminTaskChainQuery, @Req() request: FastifyRequest): Promise<WithHiddenBodies<AdminTaskChain>> {
    if (id.length > TASK_LIMITS.taskIdChars) throw new RelayError('task_not_found', `No task with id ${id.slice(0, 64)}…`, { task_id: id.slice(0, 64) });
    const chain = await this.rpc.request(ADMIN_TASKS_SUBJECTS.chain, { task_id: id, ...(query.limit !== undefined ? { limit: query.limit } : {}) });
    const refusals = await this.rpc.request(ADMIN_AUDIT_SUBJECTS.chainRefusals, { root_task_id: chain.root_task_id });
    const whole: AdminTaskChain = { ...chain, refusals: refusals.items.map(chainRefusalOf), refusals_truncated: refusals.truncated };
    const { role, orgs } = adminPrincipalOf(request);
    const answer = orgs === 'all' ? whole : chainForOrgs(whole, orgs);
    return hidesBodies(role) ? hideChain(answer) : answer;
  }

  /** `GET /admin/tasks/{id}/upstream-calls`: each request the relay made to an upstream agent's server for the task, oldest first. */
  @Get('tasks/:id/upstream-calls')
  upstreamCalls(@Param('id') id: string): Promise<UpstreamCallsReply> {
    if (id.length > TASK_LIMITS.taskIdChars) throw new RelayError('task_not_found', `No task with id ${id.slice(0, 64)}…`, { task_id: id.slice(0, 64) });
    return this.rpc.request(NOTIFIER_SUBJECTS.upstreamCalls, { task_id: id });
  }

  /** `GET /admin/search?q=<words>&…`: full-text search over message text and artifact names, ranked, with the list's filters. */
  @Get('search')
  // Search matches message text: an auditor, who may not read it, may not probe it either.
  @LeastRole('viewer')
  async search(@Query() query: AdminSearchQuery, @Req() request: FastifyRequest): Promise<AdminSearchPage> {
    return this.rpc.request(ADMIN_TASKS_SUBJECTS.search, {
      ...(await this.filter(query, await listScopeOf(this.rpc, adminPrincipalOf(request), query.org))),
      query: query.q,
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
    });
  }

  /** `GET /admin/agents/{handle}/counts`: the agent's tasks by state, as recipient (inbox) and as sender. */
  @Get('agents/:handle/counts')
  async counts(@Param() { handle }: HandleRequest): Promise<AdminCountsReply> {
    const agent = await this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle });
    return this.rpc.request(ADMIN_TASKS_SUBJECTS.counts, { agent_id: agent.id });
  }

  /** `GET /admin/overview`: the last hour per minute, open tasks, the oldest pending one, delivery failures and the outbox lag. */
  @Get('overview')
  async overview(@Req() request: FastifyRequest): Promise<AdminOverview> {
    const { orgs } = adminPrincipalOf(request);
    const scope = orgs === 'all' ? {} : { orgs };
    const [tasks, deliveries] = await Promise.all([
      this.rpc.request(ADMIN_TASKS_SUBJECTS.overview, scope),
      this.rpc.request(ADMIN_DELIVERIES_SUBJECTS.failureCounts, scope),
    ]);
    return {
      per_minute: tasks.per_minute,
      open_by_state: tasks.open_by_state,
      oldest_pending: tasks.oldest_pending,
      delivery_failures: deliveries,
      outbox_lag: tasks.outbox_lag,
    };
  }

  /**
   * The tasks service's filter: the agent named by handle becomes its id (an unknown handle, or one
   * of an org the caller has no role in, is 404 `agent_not_found`); the list's orgs bound it.
   */
  private async filter(query: AdminTaskFilterQuery, { orgs }: ListScope): Promise<AdminTaskFilter> {
    const handle = query.agent !== undefined ? (normalizeHandle(query.agent) as string) : undefined;
    if (handle !== undefined && orgs !== 'all' && !orgs.includes(orgOf(handle))) {
      throw new RelayError('agent_not_found', `No agent with the handle ${handle}`);
    }
    const agent = handle !== undefined ? await this.rpc.request(DIRECTORY_SUBJECTS.getAgent, { handle }) : undefined;
    if (query.role !== undefined && agent === undefined) {
      throw new RelayError('invalid_params', 'role: only with agent (the agent as sender, recipient or either)', {
        field: 'role',
        fields: [{ field: 'role', messages: ['needs agent'] }],
      });
    }
    return {
      ...(agent ? { agent_id: agent.id, role: query.role ?? 'either' } : {}),
      ...(query.state && query.state.length > 0 ? { states: query.state } : {}),
      ...(query.intent && query.intent.length > 0 ? { intents: query.intent } : {}),
      ...(query.context_id !== undefined ? { context_id: query.context_id } : {}),
      ...(query.created_after !== undefined ? { created_after: query.created_after } : {}),
      ...(query.created_before !== undefined ? { created_before: query.created_before } : {}),
      ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
      ...(orgs === 'all' ? {} : { orgs }),
    };
  }
}
