import { Module } from '@nestjs/common';
import { StreamsModule } from '../../streams/streams.module';
import { TaskAccessModule } from '../../task-access/task-access.module';
import { AGENTRELAY_METHODS } from '../dialect-methods';
import { ChainRefusals } from '../chain-refusals';
import { AgentRelayMethods } from './agentrelay-methods';

/** The AgentRelay dialect of `POST /a2a` (docs/dialects.md#agentrelay). */
@Module({
  imports: [StreamsModule, TaskAccessModule],
  providers: [ChainRefusals, AgentRelayMethods, { provide: AGENTRELAY_METHODS, useExisting: AgentRelayMethods }],
  exports: [AGENTRELAY_METHODS],
})
export class AgentRelayModule {}
