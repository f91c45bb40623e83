import { Module, type DynamicModule } from '@nestjs/common';
import { TasksConfig } from '../tasks.config';
import { AdminOverview } from './admin/overview';
import { AdminTaskCounts } from './admin/task-counts';
import { AdminTaskEvents } from './admin/task-events';
import { GetAdminTask } from './admin/get-task';
import { AdminTaskChain } from './admin/task-chain';
import { ListAdminTasks } from './admin/list-tasks';
import { SearchAdminTasks } from './admin/search-tasks';
import { TaskSearch } from './admin/task-search';
import { AdminTasksController } from './admin-tasks.controller';
import { ReadTasks } from './use-cases/read-tasks';
import { SearchTasks } from './use-cases/search-tasks';
import { SendIdempotency } from './use-cases/send-idempotency';
import { CHAIN_LIMITS, SendTask } from './use-cases/send-task';
import { RecentPairs } from './store/recent-pairs';
import { TaskRepository } from './store/task-repository';
import { TasksController } from './tasks.controller';
import { TransitionTask } from './use-cases/transition-task';
import { OrgStoredBytesQuotas } from './org-quotas/org-stored-bytes-quotas';
import { ReportUpstream } from './upstream-reports/report-upstream';
import { CreatedForUpstream } from './upstream-reports/created-for-upstream';
import { UpstreamRecipients } from './upstream-reports/upstream-recipients';
import { UpstreamReportsController } from './upstream-reports/upstream-reports.controller';

@Module({})
export class TasksModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return {
      module: TasksModule,
      controllers: [TasksController, AdminTasksController, UpstreamReportsController],
      providers: [
        { provide: TasksConfig, useValue: config },
        { provide: CHAIN_LIMITS, useValue: config.chainLimits },
        TaskRepository,
        { provide: RecentPairs, useFactory: () => new RecentPairs() },
        SendIdempotency,
        SendTask,
        TransitionTask,
        UpstreamRecipients,
        CreatedForUpstream,
        OrgStoredBytesQuotas,
        ReportUpstream,
        ReadTasks,
        TaskSearch,
        SearchTasks,
        ListAdminTasks,
        GetAdminTask,
        AdminTaskChain,
        SearchAdminTasks,
        AdminTaskEvents,
        AdminTaskCounts,
        AdminOverview,
      ],
    };
  }
}
