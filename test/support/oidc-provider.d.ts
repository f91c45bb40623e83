// The oidc-provider package ships no type declarations; the tests use only this part of it.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface ProviderAccount {
    accountId: string;
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>;
  }

  export interface ProviderToken {
    kind: string;
    clientId?: string;
    accountId?: string;
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    proxy: boolean;
  }

  export type { ProviderAccount as Account, ProviderToken as Token };
}
