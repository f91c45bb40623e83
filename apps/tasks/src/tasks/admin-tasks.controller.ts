import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ADMIN_TASKS_SUBJECTS,
  AdminCountsRequest,
  AdminEventsRequest,
  AdminGetTaskRequest,
  AdminListTasksRequest,
  AdminSearchTasksRequest,
  AgentSearchTasksRequest,
  type AdminCountsReply,
  type AdminEventsReply,
  type AdminOverviewReply,
  type AdminSearchPage,
  type AdminTaskDetail,
  type AdminTaskPage,
  type AgentSearchReply,
} from '@app/contracts';
import { AdminReads } from './use-cases/admin-reads';

/** The tasks service's relay-wide reads for the admin API, and the agents' search. */
@Controller()
export class AdminTasksController {
  constructor(@Inject(AdminReads) private readonly reads: AdminReads) {}

  @MessagePattern(ADMIN_TASKS_SUBJECTS.list)
  list(@Payload() request: AdminListTasksRequest): Promise<AdminTaskPage> {
    return this.reads.list(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.get)
  get(@Payload() request: AdminGetTaskRequest): Promise<AdminTaskDetail> {
    return this.reads.get(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.search)
  search(@Payload() request: AdminSearchTasksRequest): Promise<AdminSearchPage> {
    return this.reads.search(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.agentSearch)
  agentSearch(@Payload() request: AgentSearchTasksRequest): Promise<AgentSearchReply> {
    return this.reads.searchForAgent(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.events)
  events(@Payload() request: AdminEventsRequest): Promise<AdminEventsReply> {
    return this.reads.events(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.counts)
  counts(@Payload() request: AdminCountsRequest): Promise<AdminCountsReply> {
    return this.reads.counts(request);
  }

  @MessagePattern(ADMIN_TASKS_SUBJECTS.overview)
  overview(): Promise<AdminOverviewReply> {
    return this.reads.overview();
  }
}
