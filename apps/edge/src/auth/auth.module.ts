import { Module } from '@nestjs/common';
import { ConsoleSessions } from '../console/console-sessions';
import { AdminTokenGuard } from './admin-token.guard';
import { AgentAuthenticator } from './agent-authenticator';
import { AuthFailureThrottle } from './auth-failure-throttle';
import { KeyFilter } from './key-filter';

/** Who is calling: agents by API key (through the directory), admins by the admin token or a console session. */
@Module({
  providers: [AgentAuthenticator, AdminTokenGuard, AuthFailureThrottle, KeyFilter, ConsoleSessions],
  exports: [AgentAuthenticator, AdminTokenGuard, AuthFailureThrottle, KeyFilter, ConsoleSessions],
})
export class AuthModule {}

export { AgentAuthenticator } from './agent-authenticator';
