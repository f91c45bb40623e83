import { Body, Controller, Delete, Get, HttpCode, Inject, Post, Req, Res, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { IsString, MaxLength, MinLength } from 'class-validator';
import { RelayError } from '@app/contracts';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin/admin-errors';
import { AdminAudit } from '../admin/admin-audit';
import { AdminTokenGuard, isAdminToken, readCookie } from '../auth/admin-token.guard';
import { AuthFailureThrottle } from '../auth/auth-failure-throttle';
import { EdgeConfig } from '../edge.config';
import { ConsoleSessions, SESSION_COOKIE, type ConsoleSessionView } from './console-sessions';

export class SignInBody {
  @IsString()
  @MinLength(1)
  @MaxLength(1024)
  token: string;
}

/**
 * Console sign-in with the admin token: the token is checked once (through the failed-login
 * throttle) and never kept by the browser, which holds an HttpOnly session cookie instead.
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
  ) {}

  @Post()
  @HttpCode(201)
  async signIn(@Body() body: SignInBody, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<ConsoleSessionView> {
    // The token is checked first: someone else's failures from this address never lock the admin out.
    if (!isAdminToken(body.token, this.config.RELAY_ADMIN_TOKEN)) {
      this.failures.assertAllowed(request.ip, body.token);
      this.failures.recordFailure(request.ip, body.token);
      throw new RelayError('unauthenticated', this.config.RELAY_ADMIN_TOKEN ? 'Wrong admin token' : 'The admin API is disabled: RELAY_ADMIN_TOKEN is not set');
    }
    this.failures.recordSuccess(body.token);
    const { cookie, view } = await this.sessions.create();
    await this.audit.record(`console:${view.session}`, 'session.sign_in', view.session);
    void reply.header('set-cookie', this.cookieHeader(request, cookie, Math.floor(this.config.RELAY_CONSOLE_SESSION_TTL_MS / 1000)));
    return view;
  }

  /** The signed-in session (the console asks on load); 401 without a live one. */
  @Get()
  async current(@Req() request: FastifyRequest): Promise<ConsoleSessionView> {
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    const session = cookie === undefined ? undefined : await this.sessions.find(cookie);
    if (!session) throw new RelayError('unauthenticated', 'No console session: sign in with POST /admin/session');
    return session;
  }

  /** Signs out: the session is deleted server-side, so the cookie stops working on every edge. */
  @Delete()
  @HttpCode(204)
  @UseGuards(AdminTokenGuard)
  async signOut(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const cookie = readCookie(request.headers.cookie, SESSION_COOKIE);
    if (cookie === undefined) throw new RelayError('invalid_params', 'DELETE /admin/session signs out a console session: send its cookie', { field: 'cookie' });
    const session = await this.sessions.find(cookie);
    await this.sessions.delete(cookie);
    if (session) await this.audit.record(`console:${session.session}`, 'session.sign_out', session.session);
    void reply.header('set-cookie', this.cookieHeader(request, '', 0));
  }

  private cookieHeader(request: FastifyRequest, value: string, maxAgeSeconds: number): string {
    const secure = request.protocol === 'https' || this.config.RELAY_PUBLIC_URL.startsWith('https://');
    return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/admin; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`;
  }
}
