import { Module } from '@nestjs/common';
import { AdminTokenGuard } from './admin-token.guard';
import { AgentAuthenticator } from './agent-authenticator';
import { AuthFailureThrottle } from './auth-failure-throttle';

/** Who is calling: agents by API key (through the directory), admins by the admin token. */
@Module({ providers: [AgentAuthenticator, AdminTokenGuard, AuthFailureThrottle], exports: [AgentAuthenticator, AdminTokenGuard, AuthFailureThrottle] })
export class AuthModule {}

export { AgentAuthenticator } from './agent-authenticator';
