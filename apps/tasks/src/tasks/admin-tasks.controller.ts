import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ADMIN_TASKS_SUBJECTS,
  AdminCountsRequest,
  AdminEventsRequest,
  AdminGetTaskRequest,
  AdminListTasksRequest,
  AdminSearchTasksRequest,
  AdminTaskChainRequest,
  AgentSearchTasksRequest,
  type AdminCountsReply,
  type AdminEventsReply,
  AdminOverviewRequest,
  type AdminOverviewReply,
  type AdminSearchPage,
  type AdminTaskChainReply,
  type AdminTaskDetail,
  type AdminTaskPage,
  type AgentSearchReply,
} from '@app/contracts';
import { AdminOverview } from './admin/overview';
import { AdminTaskCounts } from './admin/task-counts';
import { AdminTaskEvents } from './admin/task-events';
import { GetAdminTask } from './admin/get-task';
import { AdminTaskChain } from './admin/task-chain';
import { ListAdminTasks } from './admin/list-tasks';
import { SearchAdminTasks } from './admin/search-tasks';
import { SearchTasks } from './use-cases/search-tasks';

/** The tasks service's relay-wide reads for the admin API, and the agents' search. */
@Controller()
export class AdminTasksController {
  constructor(
    @Inject(ListAdminTasks) private readonly listTasks: ListAdminTasks,
    @Inject(GetAdminTask) private readonly getTask: GetAdminTask,
    @Inject(SearchAdminTasks) private readonly searchAdminTasks: SearchAdminTasks,
    @Inject(SearchTasks) private readonly searchTasks: SearchTasks,
    @Inject(AdminTaskEvents) private readonly taskEvents: AdminTaskEvents,
    @Inject(AdminTaskCounts) private readonly taskCounts: AdminTaskCounts,
    @Inject(AdminOverview) private readonly adminOverview: AdminOverview,
    @Inject(AdminTaskChain) private readonly taskChain: AdminTaskChain,
  ) {}

  @MessagePattern(ADMIN_TASKS_SUBJECTS.list)
  list(@Payload() request: AdminListTasksRequest): Promise<AdminTaskPage> {
    return this.listTasks.list(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.get)
  get(@Payload() request: AdminGetTaskRequest): Promise<AdminTaskDetail> {
    return this.getTask.get(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.chain)
  chain(@Payload() request: AdminTaskChainRequest): Promise<AdminTaskChainReply> {
    return this.taskChain.chain(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.search)
  search(@Payload() request: AdminSearchTasksRequest): Promise<AdminSearchPage> {
    return this.searchAdminTasks.search(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.agentSearch)
  agentSearch(@Payload() request: AgentSearchTasksRequest): Promise<AgentSearchReply> {
    return this.searchTasks.search(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.events)
  events(@Payload() request: AdminEventsRequest): Promise<AdminEventsReply> {
    return this.taskEvents.events(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.counts)
  counts(@Payload() request: AdminCountsRequest): Promise<AdminCountsReply> {
    return this.taskCounts.counts(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.overview)
  overview(@Payload() request: AdminOverviewRequest): Promise<AdminOverviewReply> {
    return this.adminOverview.overview(request.orgs);
  }
}
