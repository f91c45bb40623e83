import { Module } from '@nestjs/common';
import { CardsModule } from '../../cards/cards.module';
import { StreamsModule } from '../../streams/streams.module';
import { TaskAccessModule } from '../../task-access/task-access.module';
import { ChainRefusals } from '../chain-refusals';
import { A2A_METHODS } from '../dialect-methods';
import { A2aMethods } from './a2a-methods';
import { TaskEventWaiter } from './task-event-waiter';

/** The standard A2A dialect (v0.3 and v1.0) of the JSON-RPC endpoints. */
@Module({
  imports: [CardsModule, StreamsModule, TaskAccessModule],
  providers: [ChainRefusals, TaskEventWaiter, A2aMethods, { provide: A2A_METHODS, useExisting: A2aMethods }],
  exports: [A2A_METHODS, A2aMethods],
})
export class A2aModule {}
