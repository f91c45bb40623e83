import type { AgentCardV1 } from './agent-card';

/**
 * The v0.3 rendering of a v1.0 AgentCard, for `agent/getAuthenticatedExtendedCard` asked with a
 * 0.3 wire version: `url` / `preferredTransport` instead of `supportedInterfaces`, JSON-Schema
 * security schemes with a `type`, and `supportsAuthenticatedExtendedCard`.
 */
export function agentCardV03(card: AgentCardV1): Record<string, unknown> {
  const v03 = card.supportedInterfaces.find((entry) => entry.protocolVersion === '0.3') ?? card.supportedInterfaces[0];
  const securitySchemes: Record<string, Record<string, unknown>> = {};
  for (const [name, scheme] of Object.entries(card.securitySchemes)) {
    if (scheme.httpAuthSecurityScheme) {
      const { scheme: httpScheme, bearerFormat, description } = scheme.httpAuthSecurityScheme;
      securitySchemes[name] = {
        type: 'http',
        scheme: httpScheme.toLowerCase(),
        ...(bearerFormat ? { bearerFormat } : {}),
        ...(description ? { description } : {}),
      };
    } else if (scheme.apiKeySecurityScheme) {
      const { location, name: header, description } = scheme.apiKeySecurityScheme;
      securitySchemes[name] = { type: 'apiKey', in: location, name: header, ...(description ? { description } : {}) };
    } else if (scheme.oauth2SecurityScheme) {
      const { description, flows } = scheme.oauth2SecurityScheme;
      securitySchemes[name] = { type: 'oauth2', flows, ...(description ? { description } : {}) };
    }
  }
  return {
    protocolVersion: '0.3.0',
    name: card.name,
    description: card.description,
    url: v03.url,
    preferredTransport: 'JSONRPC',
    additionalInterfaces: card.supportedInterfaces
      .filter((entry) => entry.protocolVersion === '0.3')
      .map((entry) => ({ url: entry.url, transport: entry.protocolBinding })),
    version: card.version,
    provider: card.provider,
    capabilities: { streaming: card.capabilities.streaming, pushNotifications: card.capabilities.pushNotifications },
    securitySchemes,
    security: card.securityRequirements.map((requirement) => Object.fromEntries(Object.keys(requirement.schemes).map((scheme) => [scheme, []]))),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills,
    supportsAuthenticatedExtendedCard: card.capabilities.extendedAgentCard,
  };
}
