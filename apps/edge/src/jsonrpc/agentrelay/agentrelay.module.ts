import { Module } from '@nestjs/common';
import { StreamsModule } from '../../streams/streams.module';
import { TaskAccessModule } from '../../tasks/task-access.module';
import { AGENTRELAY_METHODS } from '../json-rpc.types';
import { AgentRelayMethods } from './agentrelay-methods';

/** The AgentRelay dialect of `POST /a2a` (docs/dialects.md#agentrelay). */
@Module({
  imports: [StreamsModule, TaskAccessModule],
  providers: [AgentRelayMethods, { provide: AGENTRELAY_METHODS, useExisting: AgentRelayMethods }],
  exports: [AGENTRELAY_METHODS],
})
export class AgentRelayModule {}
