import { Module } from '@nestjs/common';
import { ReadTasks } from './read-tasks';
import { SendIdempotency } from './send-idempotency';
import { SendTask } from './send-task';
import { TaskRepository } from './task-repository';
import { TasksController } from './tasks.controller';
import { TransitionTask } from './transition-task';

@Module({ controllers: [TasksController], providers: [TaskRepository, SendIdempotency, SendTask, TransitionTask, ReadTasks] })
export class TasksModule {}
