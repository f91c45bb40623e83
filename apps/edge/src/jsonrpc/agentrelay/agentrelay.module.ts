import { Module } from '@nestjs/common';
import { AGENTRELAY_METHODS } from '../json-rpc.types';
import { AgentRelayMethods } from './agentrelay-methods';

/** The AgentRelay dialect (seed 000) of `POST /a2a`. */
@Module({
  providers: [AgentRelayMethods, { provide: AGENTRELAY_METHODS, useExisting: AgentRelayMethods }],
  exports: [AGENTRELAY_METHODS],
})
export class AgentRelayModule {}
