import { Module } from '@nestjs/common';
import { EndpointModule } from '../endpoint/endpoint.module';
import { A2aModule } from '../methods/a2a/a2a.module';
import { RestController } from './rest.controller';
import { RestEndpoint } from './rest.endpoint';

/** The A2A HTTP+JSON binding of the agent endpoints (v1.0, and v0.3 under /v1), over the same A2A methods as JSON-RPC. */
@Module({
  imports: [EndpointModule, A2aModule],
  controllers: [RestController],
  providers: [RestEndpoint],
})
export class RestModule {}
