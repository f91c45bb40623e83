import { Module } from '@nestjs/common';
import { AdminReads } from './admin-reads';
import { AdminTasksController } from './admin-tasks.controller';
import { ReadTasks } from './read-tasks';
import { SendIdempotency } from './send-idempotency';
import { SendTask } from './send-task';
import { TaskRepository } from './task-repository';
import { TasksController } from './tasks.controller';
import { TransitionTask } from './transition-task';

@Module({ controllers: [TasksController, AdminTasksController], providers: [TaskRepository, SendIdempotency, SendTask, TransitionTask, ReadTasks, AdminReads] })
export class TasksModule {}
