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

/** Puts the credential's headers on every call of the client, beside the call's own (the sender, the relay task). */
function headersInterceptor(headers: () => Promise<Record<string, string>>): CallInterceptor {
  return {
    async before(args) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...(await headers()) } };
    },
    async after() {},
  };
}

/** The headers of one call about a relay task: which task, and (a delivery) who sent it. */
export function callHeaders(taskId: string, sender?: string): Record<string, string> {
  return { [RELAY_TASK_HEADER]: taskId, ...(sender !== undefined ? { [SENDER_HEADER]: sender } : {}) };
}

/**
 * The official SDK's A2A client for an upstream agent's interface: JSON-RPC or HTTP+JSON, v1.0 or
 * (through the SDK's compat layer) v0.3, every request through `fetchImpl` (the SSRF-guarded one)
 * with the credential's `headers` on it (each call gives its own, `callHeaders`, as `serviceParameters`).
 */
export function upstreamClient(upstream: UpstreamInterface, fetchImpl: typeof fetch, headers: () => Promise<Record<string, string>>): Promise<Client> {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl, legacyCompat }), new RestTransportFactory({ fetchImpl, legacyCompat })],
      clientConfig: { interceptors: [headersInterceptor(headers)] },
    }),
  );
  return factory.createFromAgentCard(cardOf(upstream));
}
