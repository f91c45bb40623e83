import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { RateLimitModule } from '../rate-limit/rate-limit.module';
import { CallerGate } from './caller-gate';
import { SseWriter } from './sse-writer';

/** What the agent endpoints of both bindings share: the caller gate and the SSE writer. */
@Module({
  imports: [AuthModule, RateLimitModule],
  providers: [CallerGate, SseWriter],
  exports: [CallerGate, SseWriter],
})
export class EndpointModule {}
