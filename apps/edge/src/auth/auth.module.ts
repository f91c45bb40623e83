import { Module } from '@nestjs/common';
import { AdminTokenGuard } from './admin-token.guard';
import { AgentAuthenticator } from './agent-authenticator';

/** Who is calling: agents by API key (through the directory), admins by the admin token. */
@Module({ providers: [AgentAuthenticator, AdminTokenGuard], exports: [AgentAuthenticator, AdminTokenGuard] })
export class AuthModule {}

export { AgentAuthenticator } from './agent-authenticator';
