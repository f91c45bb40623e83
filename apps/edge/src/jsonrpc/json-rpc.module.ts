import { Module } from '@nestjs/common';
import { EndpointModule } from '../endpoint/endpoint.module';
import { A2aModule } from '../methods/a2a/a2a.module';
import { AgentRelayModule } from '../methods/agentrelay/agentrelay.module';
import { JsonRpcController } from './json-rpc.controller';
import { JsonRpcEndpoint } from './json-rpc.endpoint';

/** The JSON-RPC endpoints and their two families of dialects: AgentRelay and standard A2A (see docs/dialects.md). */
@Module({
  imports: [EndpointModule, AgentRelayModule, A2aModule],
  controllers: [JsonRpcController],
  providers: [JsonRpcEndpoint],
})
export class JsonRpcModule {}
