import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX, RelayError } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { AuthFailureThrottle } from './auth-failure-throttle';

export const ADMIN_REALM = 'Bearer realm="agentrelay-admin"';

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Whether `presented` is the admin token, compared in constant time (over digests of equal length). */
export function isAdminToken(presented: string | undefined, configured: string | undefined): boolean {
  if (!configured || !presented) return false;
  // An agent key is never the admin token, whatever the configuration says.
  if (presented.startsWith(API_KEY_PREFIX)) return false;
  return timingSafeEqual(digest(presented), digest(configured));
}

/** Lets a request through only with `Authorization: Bearer <RELAY_ADMIN_TOKEN>`; unset token → always 401. */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(AuthFailureThrottle) private readonly failures: AuthFailureThrottle,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const header = request.headers['authorization'];
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const presented = match?.[1];
    // The token is checked first (in constant time, without I/O): someone else's failures from
    // this address never lock the admin out.
    if (isAdminToken(presented, this.config.RELAY_ADMIN_TOKEN)) {
      this.failures.recordSuccess(presented as string);
      return true;
    }
    if (header !== undefined) {
      // An agent key here is the wrong realm, not a wrong key: it counts for the address only, so
      // that an agent calling the admin API cannot spend its own key's budget with the agent API.
      const secret = presented?.startsWith(API_KEY_PREFIX) ? undefined : presented;
      this.failures.assertAllowed(request.ip, secret);
      this.failures.recordFailure(request.ip, secret);
    }
    http.getResponse<FastifyReply>().header('www-authenticate', ADMIN_REALM);
    throw new RelayError(
      'unauthenticated',
      this.config.RELAY_ADMIN_TOKEN ? 'Missing or invalid admin token' : 'The admin API is disabled: RELAY_ADMIN_TOKEN is not set',
    );
  }
}
