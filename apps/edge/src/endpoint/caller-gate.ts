import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RelayError, type AgentIdentity } from '@app/contracts';
import { AgentAuthenticator } from '../auth/agent-authenticator';
import { RateLimiter } from '../rate-limit/rate-limiter';

/**
 * What every agent call passes before its method runs, whatever binding carries it: the API key
 * is authenticated and the caller's rate limit is charged (`x-ratelimit-limit` on every answer).
 */
@Injectable()
export class CallerGate {
  constructor(
    @Inject(AgentAuthenticator) private readonly authenticator: AgentAuthenticator,
    @Inject(RateLimiter) private readonly rateLimiter: RateLimiter,
  ) {}

  async admit(request: FastifyRequest, reply: FastifyReply): Promise<AgentIdentity> {
    const caller = await this.authenticator.authenticate(request.headers, request.ip);
    const decision = await this.rateLimiter.consume(caller.id);
    reply.header('x-ratelimit-limit', String(decision.limit));
    if (!decision.allowed) {
      reply.header('retry-after', String(decision.retryAfterSeconds));
      throw new RelayError('rate_limited', `Rate limit of ${decision.limit} requests per minute exceeded; retry after ${decision.retryAfterSeconds} s`, {
        limit: decision.limit,
        retry_after_seconds: decision.retryAfterSeconds,
      });
    }
    return caller;
  }
}
