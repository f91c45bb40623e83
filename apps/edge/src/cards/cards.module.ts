import { Module } from '@nestjs/common';
import { CardsController } from './cards.controller';
import { AgentCardService } from './cards.service';

/** Public agent cards. `AgentCardService` is exported for `GetExtendedAgentCard`. */
@Module({ controllers: [CardsController], providers: [AgentCardService], exports: [AgentCardService] })
export class CardsModule {}
