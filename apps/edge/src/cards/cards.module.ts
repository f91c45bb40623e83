import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CardsController } from './cards.controller';
import { AgentCardService } from './cards.service';

/** Public agent cards. `AgentCardService` is exported for `GetExtendedAgentCard`. */
@Module({ imports: [AuthModule], controllers: [CardsController], providers: [AgentCardService], exports: [AgentCardService] })
export class CardsModule {}
