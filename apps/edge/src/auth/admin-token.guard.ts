import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX, RelayError } from '@app/contracts';
import { ConsoleSessions, SESSION_COOKIE } from '../console/console-sessions';
import { EdgeConfig } from '../edge.config';
import { AuthFailureThrottle } from './auth-failure-throttle';

export const ADMIN_REALM = 'Bearer realm="agentrelay-admin"';

/** Who made an admin call, as the admin audit names them. */
export const ADMIN_TOKEN_ACTOR = 'admin token';

/** Methods a console session may use without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

const actors = new WeakMap<object, string>();

/** The actor of an admin request the guard let through: `admin token` or `console:<session>`. */
export function adminActorOf(request: FastifyRequest): string {
  return actors.get(request) ?? ADMIN_TOKEN_ACTOR;
}

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

/** The value of one cookie in a `Cookie` header (the first one of that name), or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const separator = pair.indexOf('=');
    if (separator > 0 && pair.slice(0, separator).trim() === name) return pair.slice(separator + 1).trim();
  }
  return undefined;
}

/**
 * Lets a request through with `Authorization: Bearer <RELAY_ADMIN_TOKEN>`, or with the cookie of a
 * live console session (then every method but GET and HEAD also needs the session's
 * `X-CSRF-Token`, else 403 `csrf_failed`). Unset token → always 401.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(AuthFailureThrottle) private readonly failures: AuthFailureThrottle,
    @Inject(ConsoleSessions) private readonly sessions: ConsoleSessions,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const header = request.headers['authorization'];
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (header === undefined && cookie !== undefined && this.config.RELAY_ADMIN_TOKEN) {
      const session = await this.sessions.find(cookie);
      if (session) {
        const csrf = request.headers['x-csrf-token'];
        if (!SAFE_METHODS.has(request.method) && !this.sessions.csrfMatches(cookie, typeof csrf === 'string' ? csrf : undefined)) {
          throw new RelayError('csrf_failed', 'This console session needs its X-CSRF-Token header (from POST or GET /admin/session) on every change');
        }
        actors.set(request, `console:${session.session}`);
        return true;
      }
    }
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const presented = match?.[1];
    this.failures.assertAllowed(request.ip, presented);
    if (isAdminToken(presented, this.config.RELAY_ADMIN_TOKEN)) {
      this.failures.recordSuccess(presented as string);
      actors.set(request, ADMIN_TOKEN_ACTOR);
      return true;
    }
    if (header !== undefined) this.failures.recordFailure(request.ip, presented);
    http.getResponse<FastifyReply>().header('www-authenticate', ADMIN_REALM);
    throw new RelayError(
      'unauthenticated',
      !this.config.RELAY_ADMIN_TOKEN
        ? 'The admin API is disabled: RELAY_ADMIN_TOKEN is not set'
        : cookie !== undefined && header === undefined
          ? 'The console session has expired or was signed out; sign in again'
          : 'Missing or invalid admin token',
    );
  }
}
