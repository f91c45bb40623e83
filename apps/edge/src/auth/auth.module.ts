import { Module } from '@nestjs/common';
import { ConsoleSessions } from '../console/console-sessions';
import { AdminTokenGuard } from './admin-token.guard';
import { AgentAuthenticator } from './agent-authenticator';
import { AuthFailureThrottle } from './auth-failure-throttle';
import { KeyFilter } from './key-filter';
import { TokenVerifier } from './token-verifier';

/** Who is calling: agents by API key or IdP JWT (through the directory), admins by the admin token or a console session. */
@Module({
  providers: [AgentAuthenticator, AdminTokenGuard, AuthFailureThrottle, KeyFilter, ConsoleSessions, TokenVerifier],
  exports: [AgentAuthenticator, AdminTokenGuard, AuthFailureThrottle, KeyFilter, ConsoleSessions, TokenVerifier],
})
export class AuthModule {}

export { AgentAuthenticator } from './agent-authenticator';
