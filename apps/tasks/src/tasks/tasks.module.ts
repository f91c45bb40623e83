import { Module, type DynamicModule } from '@nestjs/common';
import { TasksConfig } from '../tasks.config';
import { AdminOverview } from './admin/overview';
import { AdminTaskCounts } from './admin/task-counts';
import { AdminTaskEvents } from './admin/task-events';
import { GetAdminTask } from './admin/get-task';
import { ListAdminTasks } from './admin/list-tasks';
import { SearchAdminTasks } from './admin/search-tasks';
import { TaskSearch } from './admin/task-search';
import { AdminTasksController } from './admin-tasks.controller';
import { ReadTasks } from './use-cases/read-tasks';
import { SearchTasks } from './use-cases/search-tasks';
import { SendIdempotency } from './use-cases/send-idempotency';
import { CHAIN_LIMITS, SendTask } from './use-cases/send-task';
import { TaskRepository } from './store/task-repository';
import { TasksController } from './tasks.controller';
import { TransitionTask } from './use-cases/transition-task';

@Module({
  controllers: [TasksController, AdminTasksController],
  providers: [
    TaskRepository,
    SendIdempotency,
    SendTask,
    TransitionTask,
    ReadTasks,
    TaskSearch,
    SearchTasks,
    ListAdminTasks,
    GetAdminTask,
    SearchAdminTasks,
    AdminTaskEvents,
    AdminTaskCounts,
    AdminOverview,
  ],
})
export class TasksModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return { module: TasksModule, providers: [{ provide: CHAIN_LIMITS, useValue: config.chainLimits }] };
  }
}
