import { Module } from '@nestjs/common';
import { AgentAuthenticator } from './agent-authenticator';
import { AuthFailureThrottle } from './auth-failure-throttle';
import { KeyFilter } from './key-filter';
import { TokenVerifier } from './token-verifier';

/** Who is calling: agents by API key or IdP JWT (through the directory); the failure throttle both agents' and operators' sign-ins pass. */
@Module({
  providers: [AgentAuthenticator, AuthFailureThrottle, KeyFilter, TokenVerifier],
  exports: [AgentAuthenticator, AuthFailureThrottle, KeyFilter, TokenVerifier],
})
export class AuthModule {}

export { AgentAuthenticator } from './agent-authenticator';
