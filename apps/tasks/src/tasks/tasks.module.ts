import { Module } from '@nestjs/common';
import { AdminReads } from './use-cases/admin-reads';
import { AdminTasksController } from './admin-tasks.controller';
import { ReadTasks } from './use-cases/read-tasks';
import { SendIdempotency } from './use-cases/send-idempotency';
import { SendTask } from './use-cases/send-task';
import { TaskRepository } from './store/task-repository';
import { TasksController } from './tasks.controller';
import { TransitionTask } from './use-cases/transition-task';

@Module({ controllers: [TasksController, AdminTasksController], providers: [TaskRepository, SendIdempotency, SendTask, TransitionTask, ReadTasks, AdminReads] })
export class TasksModule {}
