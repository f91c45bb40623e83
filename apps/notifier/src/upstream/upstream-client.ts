import type { AgentCard } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, RestTransportFactory, type CallInterceptor, type Client } from '@a2a-js/sdk/client';
import type { UpstreamInterface } from '@app/contracts';

/** The header that names the sender of a handoff to an upstream agent (the same handle is in the message metadata). */
export const SENDER_HEADER = 'X-AgentRelay-Sender';
/** The header that names the relay task a request to an upstream agent is about. */
export const RELAY_TASK_HEADER = 'X-AgentRelay-Task';

/** The card the SDK client is made from: the one interface the relay chose when it read the upstream's card. */
function cardOf(upstream: UpstreamInterface): AgentCard {
  return {
    name: 'upstream',
    description: '',
    supportedInterfaces: [{ url: upstream.url, protocolBinding: upstream.binding, tenant: '', protocolVersion: upstream.protocol_version }],
    provider: undefined,
    version: '',
    capabilities: { streaming: upstream.streaming, pushNotifications: upstream.push_notifications, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: [],
    defaultOutputModes: [],
    skills: [],
    signatures: [],
  };
}

/** Puts these headers (the credential, the sender) on every call of the client. */
function headersInterceptor(headers: Record<string, string>): CallInterceptor {
  return {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...headers } };
    },
    async after() {},
  };
}

/**
 * The official SDK's A2A client for an upstream agent's interface: JSON-RPC or HTTP+JSON, v1.0 or
 * (through the SDK's compat layer) v0.3, every request through `fetchImpl` (the SSRF-guarded one)
 * with `headers` on it.
 */
export function upstreamClient(upstream: UpstreamInterface, fetchImpl: typeof fetch, headers: Record<string, string>): Promise<Client> {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
      clientConfig: { interceptors: [headersInterceptor(headers)] },
    }),
  );
  return factory.createFromAgentCard(cardOf(upstream));
}
