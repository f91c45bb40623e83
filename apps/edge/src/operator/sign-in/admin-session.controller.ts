import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { PERSON_ROLE_SUBJECTS, RelayError, type RoleGrant } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { AdminAudit } from '../audit/admin-audit';
import { LeastRole, PublicAdminRoute } from '../admin-roles';
import { AdminTokenGuard, isAdminToken, readCookie } from './admin-token.guard';
import { AuthFailureThrottle } from '../../auth/auth-failure-throttle';
import { EdgeConfig } from '../../edge.config';
import { ConsoleOidc, OIDC_FLOW_COOKIE, OIDC_FLOW_TTL_SECONDS, OIDC_START_PATH, SignInFailure } from './console-oidc';
import { CONSOLE_SECURITY_HEADERS } from '../console-static';
import { ConsoleSessions, SESSION_COOKIE, type ConsoleSessionView } from './console-sessions';

export class SignInBody {
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  token: string;
}

/** How the console may sign in on this relay (the sign-in page asks before it shows its form). */
export interface SignInMethods {
  admin_token: boolean;
  oidc: { start_url: string } | null;
}

const FLOW_COOKIE_PATH = '/admin/session/oidc';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/**
 * Console sign-in, two ways: with the admin token (checked once, through the failed-login throttle,
 * and never kept by the browser), or as a person through the organisation's OpenID Provider (the
 * authorization code flow with PKCE). Either way the browser holds an HttpOnly session cookie and
 * the session lives server-side, with the role it was given.
 */
@Controller('admin/session')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
export class AdminSessionController {
  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(AuthFailureThrottle) private readonly failures: AuthFailureThrottle,
    @Inject(ConsoleSessions) private readonly sessions: ConsoleSessions,
    @Inject(AdminAudit) private readonly audit: AdminAudit,
    @Inject(ConsoleOidc) private readonly oidc: ConsoleOidc,
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
  ) {}

  /** The roles admins gave the person through the admin API (none when the directory does not answer: the claims' roles alone then). */
  private async givenRoles(person: { issuer: string; sub: string }): Promise<RoleGrant[]> {
    try {
      return (await this.rpc.request(PERSON_ROLE_SUBJECTS.get, { issuer: person.issuer, subject: person.sub })).grants;
    } catch (error) {
      if (error instanceof RelayError && (error.reason === 'service_unavailable' || error.reason === 'service_timeout')) return [];
      throw error;
    }
  }

  @Post()
  @HttpCode(201)
  @PublicAdminRoute()
  async signIn(@Body() body: SignInBody, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<ConsoleSessionView> {
    // The token is checked first: someone else's failures from this address never lock the admin out.
    if (!isAdminToken(body.token, this.config.RELAY_ADMIN_TOKEN)) {
      this.failures.assertAllowed(request.ip, body.token);
      this.failures.recordFailure(request.ip, body.token);
      throw new RelayError(
        'unauthenticated',
        this.config.RELAY_ADMIN_TOKEN ? 'Wrong admin token' : 'Sign-in with the admin token is off: RELAY_ADMIN_TOKEN is not set',
      );
    }
    this.failures.recordSuccess(body.token);
    const { cookie, view } = await this.sessions.create();
    await this.audit.record({ actor: `console:${view.session}`, person: null }, 'session.sign_in', view.session);
    void reply.header('set-cookie', this.sessionCookie(request, cookie, Math.floor(this.config.RELAY_CONSOLE_SESSION_TTL_MS / 1000)));
    return view;
  }

  /** The signed-in session (the console asks on load): its role and, for a person, who they are; 401 without a live one. */
  @Get()
  @PublicAdminRoute()
  async current(@Req() request: FastifyRequest): Promise<ConsoleSessionView> {
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    const session = cookie === undefined ? undefined : await this.sessions.find(cookie);
    if (!session) throw new RelayError('unauthenticated', 'No console session: sign in with POST /admin/session or through OIDC');
    return session;
  }

  @Get('methods')
  @PublicAdminRoute()
  methods(): SignInMethods {
    return { admin_token: this.config.RELAY_ADMIN_TOKEN !== undefined, oidc: this.oidc.enabled ? { start_url: OIDC_START_PATH } : null };
  }

  /** Signs out: the session is deleted server-side, so the cookie stops working on every edge. */
  @Delete()
  @HttpCode(204)
  @UseGuards(AdminTokenGuard)
  @LeastRole('auditor')
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (cookie === undefined) throw new RelayError('invalid_params', 'DELETE /admin/session signs out a console session: send its cookie', { field: 'cookie' });
    const session = await this.sessions.find(cookie);
    await this.sessions.delete(cookie);
    if (session) await this.audit.record({ actor: `console:${session.session}`, person: session.person }, 'session.sign_out', session.session);
    void reply.header('set-cookie', this.sessionCookie(request, '', 0));
  }

  /** `GET /admin/session/oidc/start`: sends the browser to the provider's login, with PKCE, state and nonce. */
  @Get('oidc/start')
  @PublicAdminRoute()
  async startOidc(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const { authorizationUrl, flow } = await this.oidc.start();
      await reply
        .header('set-cookie', this.flowCookie(request, flow, OIDC_FLOW_TTL_SECONDS))
        .header('cache-control', 'no-store')
        .redirect(authorizationUrl, 303);
    } catch (error) {
      await this.failurePage(request, reply, error);
    }
  }

  /** `GET /admin/session/oidc/callback`: where the provider sends the person back; a session, then the console. */
  @Get('oidc/callback')
  @PublicAdminRoute()
  async finishOidc(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    try {
      const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?') + 1) : '';
      const { person, role, grants } = await this.oidc.finish(query, readCookie(request.headers.cookie, OIDC_FLOW_COOKIE), (person) => this.givenRoles(person));
      const { cookie, view } = await this.sessions.create({ role, grants, person });
      await this.audit.record({ actor: `console:${view.session}`, person }, 'session.sign_in', view.session, { role, grants });
      await reply
        .header('set-cookie', [
          this.sessionCookie(request, cookie, Math.floor(this.config.RELAY_CONSOLE_SESSION_TTL_MS / 1000)),
          this.flowCookie(request, '', 0),
        ])
        .header('cache-control', 'no-store')
        .redirect('/console/', 303);
    } catch (error) {
      await this.failurePage(request, reply, error);
    }
  }

  /** A sign-in that did not complete, told to the person in the browser (a page, since they came by a redirect). */
  private async failurePage(request: FastifyRequest, reply: FastifyReply, error: unknown): Promise<void> {
    const failure =
      error instanceof SignInFailure
        ? error
        : error instanceof RelayError && error.reason === 'service_unavailable'
          ? new SignInFailure(503, 'Sign-in unavailable', 'The relay cannot keep sessions right now; try again in a moment.')
          : undefined;
    if (!failure) throw error;
    if (failure.status === 503) void reply.header('retry-after', '5');
    const page = [
      '<!doctype html>',
      '<html lang="en"><head><meta charset="utf-8"><title>AgentRelay console: ' + escapeHtml(failure.title) + '</title></head>',
      '<body><main>',
      `<h1>${escapeHtml(failure.title)}</h1>`,
      `<p role="alert">${escapeHtml(failure.message)}</p>`,
      '<p><a href="/console/">Back to the console</a></p>',
      '</main></body></html>',
    ].join('\n');
    await reply
      .code(failure.status)
      .headers(CONSOLE_SECURITY_HEADERS)
      .header('cache-control', 'no-store')
      .header('set-cookie', this.flowCookie(request, '', 0))
      .type('text/html; charset=utf-8')
      .send(page);
  }

  private secure(request: FastifyRequest): boolean {
    return request.protocol === 'https' || this.config.RELAY_PUBLIC_URL.startsWith('https://');
  }

  private sessionCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${maxAgeSeconds}${this.secure(request) ? '; Secure' : ''}`;
  }

  /** The sign-in in progress: Lax, since the provider's redirect back is a navigation from another site. */
  private flowCookie(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    return `${OIDC_FLOW_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=${FLOW_COOKIE_PATH}; Max-Age=${maxAgeSeconds}${this.secure(request) ? '; Secure' : ''}`;
  }
}
