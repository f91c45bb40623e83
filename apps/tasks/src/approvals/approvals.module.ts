import { Module, type DynamicModule } from '@nestjs/common';
import { TasksConfig } from '../tasks.config';
import { ApprovalsController } from './approvals.controller';
import { HoldDecisions } from './hold-decisions';

/** Held handoffs (docs/decisions/0024-held-handoffs.md): a person's decision, and the expiry of the undecided. */
@Module({})
export class ApprovalsModule {
  static forRoot(config: TasksConfig): DynamicModule {
    return { module: ApprovalsModule, controllers: [ApprovalsController], providers: [{ provide: TasksConfig, useValue: config }, HoldDecisions] };
  }
}
