import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RelayError, type AgentIdentity } from '@app/contracts';
import { AgentAuthenticator } from '../auth/agent-authenticator';
import { HttpMetrics } from '@app/metrics';
import { RateLimiter } from '../rate-limit/rate-limiter';
import { DirectoryLookups } from '../directory/directory-lookups';
import { CallersAtLimit } from './callers-at-limit';

/**
 * What every agent call passes before its method runs, whatever binding carries it: the API key
 * is authenticated and the caller's rate limit is charged (`x-ratelimit-limit` on every answer).
 * A key refused because a window is used up is remembered until the window ends (CallersAtLimit),
 * so its next calls are refused before they are read.
 */
@Injectable()
export class CallerGate {
  constructor(
    @Inject(AgentAuthenticator) private readonly authenticator: AgentAuthenticator,
    @Inject(RateLimiter) private readonly rateLimiter: RateLimiter,
    @Inject(DirectoryLookups) private readonly lookups: DirectoryLookups,
    @Inject(HttpMetrics) private readonly metrics: HttpMetrics,
    @Inject(CallersAtLimit) private readonly atLimit: CallersAtLimit,
  ) {}

  async admit(request: FastifyRequest, reply: FastifyReply): Promise<AgentIdentity> {
    const caller = await this.authenticator.authenticate(request.headers, request.ip);
    const decision = await this.rateLimiter.consume(caller.id);
    reply.header('x-ratelimit-limit', String(decision.limit));
    if (!decision.allowed) {
      const refuse = (retryAfterSeconds: number): RelayError => agentRefusal(decision.limit, retryAfterSeconds);
      if (decision.windowUsedUp) this.atLimit.remember(request.headers, { until: decision.windowEndsAt, rateLimitLimit: decision.limit, refuse });
      reply.header('retry-after', String(decision.retryAfterSeconds));
      throw refuse(decision.retryAfterSeconds);
    }
    await this.chargeOrg(caller.org, request, reply, decision.limit);
    return caller;
  }

  /** The org's calls per minute across its agents (docs/orgs.md#quotas), when it has that quota. */
  private async chargeOrg(org: string, request: FastifyRequest, reply: FastifyReply, agentLimit: number): Promise<void> {
    const limit = (await this.lookups.orgQuotas(org)).requests_per_minute;
    if (limit === null) return;
    // Orgs have no `_` in their names: no org's counter is an agent's or another org's.
    const decision = await this.rateLimiter.consume(`org_${org}`, Date.now(), limit);
    if (decision.allowed) return;
    const refuse = (retryAfterSeconds: number): RelayError => {
      this.metrics.orgQuotaRejected(org, 'requests_per_minute');
      return orgRefusal(org, limit, retryAfterSeconds);
    };
    if (decision.windowUsedUp) this.atLimit.remember(request.headers, { until: decision.windowEndsAt, rateLimitLimit: agentLimit, refuse });
    reply.header('retry-after', String(decision.retryAfterSeconds));
    throw refuse(decision.retryAfterSeconds);
  }
}

function agentRefusal(limit: number, retryAfterSeconds: number): RelayError {
  return new RelayError('rate_limited', `Rate limit of ${limit} requests per minute exceeded; retry after ${retryAfterSeconds} s`, {
    limit,
    retry_after_seconds: retryAfterSeconds,
  });
}

function orgRefusal(org: string, limit: number, retryAfterSeconds: number): RelayError {
  return new RelayError(
    'rate_limited',
    `The org ${org} is at its quota of ${limit} requests per minute across its agents; retry after ${retryAfterSeconds} s`,
    {
      org,
      quota: 'requests_per_minute',
      limit,
      retry_after_seconds: retryAfterSeconds,
    },
  );
}
