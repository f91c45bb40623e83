import { DEFAULT_INPUT_MODES, inputModesOf, type AgentPublicProfile } from '@app/contracts';

/** The relay's software version, reported as the `version` of every card it serves. */
export const RELAY_VERSION = '0.1.0';

const MODES = [...DEFAULT_INPUT_MODES];

export interface AgentInterface {
  url: string;
  protocolBinding: 'JSONRPC' | 'HTTP+JSON';
  protocolVersion: '1.0' | '0.3';
  /** The agent's org's A2A tenant, which a client copies into every request; absent on the interfaces every agent has. */
  tenant?: string;
}

export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
}

/** One A2A v1.0 SecurityScheme in ProtoJSON oneof form. */
export interface SecurityScheme {
  httpAuthSecurityScheme?: { scheme: string; bearerFormat?: string; description?: string };
  apiKeySecurityScheme?: { location: string; name: string; description?: string };
  oauth2SecurityScheme?: { description?: string; flows: { clientCredentials: { tokenUrl: string; scopes: Record<string, string> } } };
}

/** An A2A v1.0 AgentCard in ProtoJSON form. */
export interface AgentCardV1 {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: AgentInterface[];
  provider: { organization: string; url: string };
  capabilities: { streaming: boolean; pushNotifications: boolean; extendedAgentCard: boolean };
  securitySchemes: Record<string, SecurityScheme>;
  securityRequirements: Array<{ schemes: Record<string, { list: string[] }> }>;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
}

/** The relay's compact agent card (`GET /.well-known/agent-card.json?id=<handle>` without `A2A-Version: 1.0`; docs/dialects.md#agent-cards). */
export interface RelayAgentCard {
  id: string;
  name: string;
  description: string | null;
  endpoint: string;
  auth: { type: 'api_key'; in: 'header'; name: 'Authorization' };
  skills: string[];
  metadata: Record<string, unknown>;
}

function base(publicUrl: string): string {
  return publicUrl.replace(/\/+$/, '');
}

/** `RELAY_PUBLIC_URL/a2a/<handle>`: the A2A endpoint of one agent. */
export function agentEndpoint(publicUrl: string, handle: string): string {
  return `${base(publicUrl)}/a2a/${handle}`;
}

/** An endpoint's interfaces in preference order: JSON-RPC 1.0, HTTP+JSON 1.0, JSON-RPC 0.3, HTTP+JSON 0.3 (HTTP+JSON on an agent's endpoint only). */
function interfaces(url: string, httpJson: boolean): AgentInterface[] {
  const rest = (protocolVersion: '1.0' | '0.3'): AgentInterface[] => (httpJson ? [{ url, protocolBinding: 'HTTP+JSON', protocolVersion }] : []);
  return [
    { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ...rest('1.0'),
    { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
    ...rest('0.3'),
  ];
}

/**
 * The interfaces of an agent of an org with a tenant (docs/orgs.md#an-orgs-own-a2a-address): the
 * same endpoint in JSON-RPC and HTTP+JSON 1.0, naming the tenant. They come after the interfaces every
 * agent has, which stay first and as they were.
 */
function tenantInterfaces(url: string, tenant: string): AgentInterface[] {
  return [
    { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant },
    { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant },
  ];
}

const SECURITY_SCHEMES: AgentCardV1['securitySchemes'] = {
  bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'ah_live_ API key', description: 'Authorization: Bearer <agent API key>' } },
  apiKey: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key', description: 'X-API-Key: <agent API key>' } },
};

const SECURITY_REQUIREMENTS: AgentCardV1['securityRequirements'] = [{ schemes: { bearer: { list: [] } } }, { schemes: { apiKey: { list: [] } } }];

/**
 * The API key schemes, plus one `oauth2` client-credentials scheme per identity provider whose
 * token endpoint is known (`oauth2`, `oauth2_2`, ...): any one of them authenticates.
 */
function securityOf(tokenUrls: readonly string[]): Pick<AgentCardV1, 'securitySchemes' | 'securityRequirements'> {
  if (tokenUrls.length === 0) return { securitySchemes: SECURITY_SCHEMES, securityRequirements: SECURITY_REQUIREMENTS };
  const securitySchemes: AgentCardV1['securitySchemes'] = { ...SECURITY_SCHEMES };
  const securityRequirements = [...SECURITY_REQUIREMENTS];
  tokenUrls.forEach((tokenUrl, index) => {
    const name = index === 0 ? 'oauth2' : `oauth2_${index + 1}`;
    securitySchemes[name] = {
      oauth2SecurityScheme: {
        description: "Authorization: Bearer <JWT access token from your identity provider's client-credentials grant>",
        flows: { clientCredentials: { tokenUrl, scopes: {} } },
      },
    };
    securityRequirements.push({ schemes: { [name]: { list: [] } } });
  });
  return { securitySchemes, securityRequirements };
}

const CAPABILITIES: AgentCardV1['capabilities'] = { streaming: true, pushNotifications: true, extendedAgentCard: true };

function taskSkill(name: string): AgentSkill {
  return {
    id: 'handoff',
    name: 'Handoff',
    description: `Send ${name} a handoff: work, a question or a proposed change, tracked as an A2A task`,
    tags: ['handoff'],
  };
}

/**
 * The A2A v1.0 card of one agent: only public fields, JSON-RPC and HTTP+JSON interfaces at
 * `RELAY_PUBLIC_URL/a2a/<handle>`, and the same naming its org's tenant when the org has one.
 */
export function agentCardV1(profile: AgentPublicProfile, publicUrl: string, tokenUrls: readonly string[] = [], tenant: string | null = null): AgentCardV1 {
  const url = agentEndpoint(publicUrl, profile.handle);
  return {
    name: profile.name,
    description: profile.description ?? `${profile.name} (${profile.handle}) on AgentRelay`,
    version: RELAY_VERSION,
    supportedInterfaces: tenant === null ? interfaces(url, true) : [...interfaces(url, true), ...tenantInterfaces(url, tenant)],
    provider: { organization: profile.org, url: base(publicUrl) },
    capabilities: { ...CAPABILITIES },
    ...securityOf(tokenUrls),
    defaultInputModes: [...inputModesOf(profile)],
    defaultOutputModes: [...MODES],
    skills: [taskSkill(profile.name), ...profile.skills.map((tag) => ({ id: tag, name: tag, description: `${profile.name} works with ${tag}`, tags: [tag] }))],
  };
}

/** The relay's own v1.0 card: its relay endpoint `RELAY_PUBLIC_URL/a2a`. */
export function relayCardV1(publicUrl: string, tokenUrls: readonly string[] = []): AgentCardV1 {
  return {
    name: 'AgentRelay',
    description:
      'A relay that lets AI agents hand work to each other over A2A JSON-RPC. Address a recipient by handle; discover agents at /.well-known/agent-card.json?id=<handle>.',
    version: RELAY_VERSION,
    supportedInterfaces: interfaces(`${base(publicUrl)}/a2a`, false),
    provider: { organization: 'AgentRelay', url: base(publicUrl) },
    capabilities: { ...CAPABILITIES },
    ...securityOf(tokenUrls),
    defaultInputModes: [...MODES],
    defaultOutputModes: [...MODES],
    skills: [
      {
        id: 'handoff',
        name: 'Handoff',
        description: 'Hand work to another registered agent, follow the thread, accept and complete handoffs addressed to you',
        tags: ['handoff', 'relay'],
      },
    ],
  };
}

/** The relay's compact card shape (docs/dialects.md#agent-cards). */
export function relayAgentCard(profile: AgentPublicProfile, publicUrl: string): RelayAgentCard {
  return {
    id: profile.handle,
    name: profile.name,
    description: profile.description,
    endpoint: `${base(publicUrl)}/a2a`,
    auth: { type: 'api_key', in: 'header', name: 'Authorization' },
    skills: [...profile.skills],
    metadata: { ...profile.metadata, role: profile.role },
  };
}
