import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, timingSafeEqual } from 'node:crypto';
import { API_KEY_PREFIX, describeGrant, RelayError, strongestRole, type RoleGrant } from '@app/contracts';
import { ConsoleSessions, SESSION_COOKIE, type ConsolePerson } from './console-sessions';
import { EdgeConfig } from '../../edge.config';
import { LEAST_ROLE, roleAllows, type AdminRole } from '../admin-roles';
import { AuthFailureThrottle } from '../../auth/auth-failure-throttle';
import { isObjectScope, routeScopeOf } from '../org-scope/admin-route-scopes';
import { OrgScope } from '../org-scope/org-scope';

export const ADMIN_REALM = 'Bearer realm="agentrelay-admin"';

/** Who made an admin call, as the admin audit names them. */
export const ADMIN_TOKEN_ACTOR = 'admin token';

/** Methods a console session may use without its CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Who made an admin request the guard let through, and what they may do. */
export interface AdminPrincipal {
  /** `admin token` or `console:<session>`. */
  actor: string;
  /** The role this request acts with: the caller's role in the org of what it acts on (docs/orgs.md#scoped-roles). */
  role: AdminRole;
  /** The caller's roles, relay-wide or per org (the admin token: relay-wide `admin`). */
  grants: RoleGrant[];
  /** The orgs whose objects this request may read or change (`all`: a relay-wide role): lists show only these. */
  orgs: 'all' | string[];
  /** The person of an OIDC session; null for the admin token and its sessions. */
  person: ConsolePerson | null;
}

const ADMIN_TOKEN_GRANTS: RoleGrant[] = [{ org: null, role: 'admin' }];

const principals = new WeakMap<object, AdminPrincipal>();

/** The principal of an admin request the guard let through (the admin token's when none was recorded). */
export function adminPrincipalOf(request: FastifyRequest): AdminPrincipal {
  return principals.get(request) ?? { actor: ADMIN_TOKEN_ACTOR, role: 'admin', grants: ADMIN_TOKEN_GRANTS, orgs: 'all', person: null };
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
 * Lets a request through with `Authorization: Bearer <RELAY_ADMIN_TOKEN>` (always `admin`), or
 * with the cookie of a live console session (then every method but GET and HEAD also needs the
 * session's `X-CSRF-Token`, else 403 `csrf_failed`), when the route's least role (`@LeastRole`)
 * allows the caller's role, else 403 `role_forbidden`. A route that declares no role (for a
 * change: on the route itself, not its class) is refused to everyone, and so is one missing from
 * ADMIN_ROUTE_SCOPES. Then the org scope (OrgScope): what none of the caller's orgs holds is 404,
 * what an org holds where their role is too weak is 403 naming the org. No admin token and no OIDC sign-in configured → always 401.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(AuthFailureThrottle) private readonly failures: AuthFailureThrottle,
    @Inject(ConsoleSessions) private readonly sessions: ConsoleSessions,
    @Inject(Reflector) private readonly reflector: Reflector,
    @Inject(OrgScope) private readonly scope: OrgScope,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const principal = await this.authenticate(context);
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    // A class's role covers its reads only: a change must name its own, so that one added to a
    // controller of reads is not open to the readers by default.
    const least = SAFE_METHODS.has(request.method)
      ? this.reflector.getAllAndOverride<AdminRole | undefined>(LEAST_ROLE, [context.getHandler(), context.getClass()])
      : this.reflector.get<AdminRole | undefined>(LEAST_ROLE, context.getHandler());
    if (least === undefined) {
      throw new RelayError('role_forbidden', `${request.method} ${request.routeOptions.url ?? request.url} declares no least role, so no one may call it`);
    }
    const route = `${request.method} ${request.routeOptions.url ?? request.url}`;
    const scope = routeScopeOf(request.method, request.routeOptions.url ?? '');
    if (scope === undefined) throw new RelayError('role_forbidden', `${route} declares no org scope, so no one may call it`);
    const strongest = strongestRole(principal.grants);
    // A person with roles in orgs hears about the object's org instead (403 naming it, or 404 when it is not theirs).
    const answeredByScope = isObjectScope(scope) && principal.grants.some((grant) => grant.org !== null);
    if ((strongest === undefined || !roleAllows(strongest, least)) && !answeredByScope) {
      throw new RelayError(
        'role_forbidden',
        `${route} needs the role ${least} or stronger; you are ${principal.grants.map(describeGrant).join(', ') || 'no role'}`,
        {
          role: principal.role,
          least_role: least,
        },
      );
    }
    const acting = await this.scope.check(principal.grants, least, scope, {
      route,
      params: (request.params ?? {}) as Record<string, string>,
      body: request.body,
    });
    principal.role = acting.role;
    principal.orgs = acting.orgs;
    principals.set(request, principal);
    return true;
  }

  private async authenticate(context: ExecutionContext): Promise<AdminPrincipal> {
    const http = context.switchToHttp();
    const request = http.getRequest<FastifyRequest>();
    const header = request.headers['authorization'];
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    const signInConfigured = this.config.RELAY_ADMIN_TOKEN !== undefined || this.config.RELAY_CONSOLE_OIDC_ISSUER !== undefined;
    if (header === undefined && cookie !== undefined && signInConfigured) {
      const session = await this.sessions.find(cookie);
      if (session) {
        const csrf = request.headers['x-csrf-token'];
        if (!SAFE_METHODS.has(request.method) && !this.sessions.csrfMatches(cookie, typeof csrf === 'string' ? csrf : undefined)) {
          throw new RelayError('csrf_failed', 'This console session needs its X-CSRF-Token header (from POST or GET /admin/session) on every change');
        }
        return { actor: `console:${session.session}`, role: session.role, grants: session.grants, orgs: 'all', person: session.person };
      }
    }
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    const presented = match?.[1];
    // The token is checked first (in constant time, without I/O): someone else's failures from
    // this address never lock the admin out.
    if (isAdminToken(presented, this.config.RELAY_ADMIN_TOKEN)) {
      this.failures.recordSuccess(presented as string);
      return { actor: ADMIN_TOKEN_ACTOR, role: 'admin', grants: ADMIN_TOKEN_GRANTS, orgs: 'all', person: null };
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
      !signInConfigured
        ? 'The admin API is disabled: neither RELAY_ADMIN_TOKEN nor RELAY_CONSOLE_OIDC_ISSUER is set'
        : cookie !== undefined && header === undefined
          ? 'The console session has expired or was signed out; sign in again'
          : 'Missing or invalid admin token',
    );
  }
}
