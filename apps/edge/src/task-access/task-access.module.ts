import { Module } from '@nestjs/common';
import { TaskAccess } from './task-access';

@Module({ providers: [TaskAccess], exports: [TaskAccess] })
export class TaskAccessModule {}
