import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { AgentCallPipeline } from './agent-call';
import { CallerGate } from './caller-gate';
import { CallersAtLimit } from './callers-at-limit';
import { SseWriter } from './sse-writer';

/** What the agent endpoints of both bindings share: the call pipeline, with its caller gate and SSE writer. */
@Module({
  imports: [AuthModule, RateLimitModule],
  providers: [CallerGate, CallersAtLimit, SseWriter, AgentCallPipeline],
  exports: [CallerGate, CallersAtLimit, SseWriter, AgentCallPipeline],
})
export class EndpointModule {}
