import { AGENT_LIMITS, UPSTREAM_LIMITS, type UpstreamBinding, type UpstreamProtocolVersion } from '@app/contracts';

/** What the relay keeps of an upstream agent's card: the interface it delivers to, and the public profile. */
export interface ParsedAgentCard {
  url: string;
  binding: UpstreamBinding;
  protocol_version: UpstreamProtocolVersion;
  streaming: boolean;
  push_notifications: boolean;
  name: string;
  description: string | null;
  skills: string[];
  /** The header of the card's first API-key security scheme (`in: header`), if it has one. */
  api_key_header: string | null;
  /** The token URL of the card's first OAuth2 scheme with a client-credentials flow, if it has one. */
  oauth2_token_url: string | null;
  /** The card's security schemes and requirements, normalised for comparison (null: none declared). */
  security: unknown;
}

export class AgentCardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AgentCardError';
  }
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** `0.3`, `0.3.0` → 0.3; `1.0`, `1.0.2`, `1` → 1.0; anything else is not spoken. */
export function protocolVersionOf(value: unknown): UpstreamProtocolVersion | null {
  const spelled = text(value);
  if (!spelled) return null;
  if (/^0\.3(\.\d+)?$/.test(spelled)) return '0.3';
  if (/^1(\.0(\.\d+)?)?$/.test(spelled)) return '1.0';
  return null;
}

/** The card's transport names, in both versions' spellings (`HTTP+JSON`, `REST`; `JSONRPC`, `JSON-RPC`). */
function bindingOf(value: unknown): UpstreamBinding | null {
  const name = text(value)
    ?.toUpperCase()
    .replace(/[^A-Z+]/g, '');
  if (name === 'JSONRPC') return 'JSONRPC';
  if (name === 'HTTP+JSON' || name === 'HTTPJSON' || name === 'REST') return 'HTTP+JSON';
  return null;
}

interface Candidate {
  url: unknown;
  binding: unknown;
  version: unknown;
}

/**
 * The interfaces a card offers, in its order of preference. v1.0: `supportedInterfaces`
 * (`url`, `protocolBinding`, `protocolVersion`). v0.3: `url` with `preferredTransport` (JSON-RPC
 * when absent), then `additionalInterfaces` (`url`, `transport`), all at the card's `protocolVersion`.
 */
function candidatesOf(card: Json): Candidate[] {
  if (Array.isArray(card.supportedInterfaces)) {
    return card.supportedInterfaces.filter(isObject).map((entry) => ({
      url: entry.url,
      binding: entry.protocolBinding ?? entry.transport,
      version: entry.protocolVersion ?? card.protocolVersion ?? '1.0',
    }));
  }
  const version = card.protocolVersion ?? '0.3';
  const candidates: Candidate[] = [];
  if (card.url !== undefined) candidates.push({ url: card.url, binding: card.preferredTransport ?? 'JSONRPC', version });
  if (Array.isArray(card.additionalInterfaces)) {
    for (const entry of card.additionalInterfaces.filter(isObject)) candidates.push({ url: entry.url, binding: entry.transport, version });
  }
  return candidates;
}

function httpUrl(value: unknown): string | null {
  const spelled = text(value);
  if (!spelled) return null;
  try {
    const url = new URL(spelled);
    // Kept as the card spells it: an HTTP+JSON client appends its paths to it.
    return url.protocol === 'http:' || url.protocol === 'https:' ? spelled : null;
  } catch {
    return null;
  }
}

function apiKeyHeaderOf(card: Json): string | null {
  if (!isObject(card.securitySchemes)) return null;
  for (const scheme of Object.values(card.securitySchemes)) {
    if (!isObject(scheme)) continue;
    // v0.3: {type: 'apiKey', in: 'header', name}; v1.0 ProtoJSON: {apiKeySecurityScheme: {location: 'header', name}}.
    const apiKey = scheme.type === 'apiKey' ? scheme : isObject(scheme.apiKeySecurityScheme) ? scheme.apiKeySecurityScheme : null;
    if (!apiKey) continue;
    const where = text(apiKey.in ?? apiKey.location)?.toLowerCase();
    const name = text(apiKey.name);
    // A header name longer than any the relay stores is no header it can send.
    if (where === 'header' && name && name.length <= UPSTREAM_LIMITS.headerNameChars) return name;
  }
  return null;
}

function oauth2TokenUrlOf(card: Json): string | null {
  if (!isObject(card.securitySchemes)) return null;
  for (const scheme of Object.values(card.securitySchemes)) {
    if (!isObject(scheme)) continue;
    // v0.3: {type: 'oauth2', flows: {clientCredentials: {tokenUrl}}}; v1.0 ProtoJSON: {oauth2SecurityScheme: {flows: {clientCredentials: {tokenUrl}}}}.
    const oauth2 = scheme.type === 'oauth2' ? scheme : isObject(scheme.oauth2SecurityScheme) ? scheme.oauth2SecurityScheme : null;
    const flows = oauth2 && isObject(oauth2.flows) ? oauth2.flows : null;
    const flow = flows && isObject(flows.clientCredentials) ? flows.clientCredentials : null;
    const url = flow ? httpUrl(flow.tokenUrl) : null;
    if (url) return url;
  }
  return null;
}

/** JSON with object keys sorted and empty strings and nulls left out: two spellings of one declaration compare equal. */
function normalised(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalised);
  if (isObject(value)) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => [key, normalised(value[key])] as const)
      .filter(([, item]) => item !== undefined);
    return Object.fromEntries(entries);
  }
  if (value === null || value === '') return undefined;
  return value;
}

/** Absent, `{}` and `[]` declare nothing alike. */
function declared(value: unknown): unknown {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) ? value.length === 0 : isObject(value) && Object.keys(value).length === 0) return undefined;
  return normalised(value);
}

/** The security schemes (v0.3 and v1.0) and requirements (v0.3 `security`, v1.0 `securityRequirements`) a card declares. */
function securityOf(card: Json): unknown {
  const schemes = declared(card.securitySchemes);
  const requirements = declared(card.securityRequirements ?? card.security);
  if (schemes === undefined && requirements === undefined) return null;
  return { ...(schemes !== undefined ? { schemes } : {}), ...(requirements !== undefined ? { requirements } : {}) };
}

/**
 * Reads an A2A agent card of either version and picks the interface the relay delivers to: the
 * first the card lists (its preference) whose binding is JSON-RPC or HTTP+JSON at version 0.3 or
 * 1.0 and whose URL is http(s). Throws `AgentCardError` naming what is missing.
 */
export function parseAgentCard(card: unknown): ParsedAgentCard {
  if (!isObject(card)) throw new AgentCardError('the agent card is not a JSON object');
  const candidates = candidatesOf(card);
  if (candidates.length === 0) throw new AgentCardError('the agent card lists no interface (supportedInterfaces, or url)');
  let chosen: { url: string; binding: UpstreamBinding; version: UpstreamProtocolVersion } | null = null;
  for (const candidate of candidates) {
    const found = httpUrl(candidate.url);
    const url = found !== null && found.length <= UPSTREAM_LIMITS.urlChars ? found : null;
    const binding = bindingOf(candidate.binding);
    const version = protocolVersionOf(candidate.version);
    if (url && binding && version) {
      chosen = { url, binding, version };
      break;
    }
  }
  if (!chosen) {
    const offered = candidates.map((candidate) => `${String(candidate.binding)} ${String(candidate.version)}`).join(', ');
    throw new AgentCardError(
      `the agent card offers no JSON-RPC or HTTP+JSON interface at A2A 0.3 or 1.0 with an http(s) URL of at most ${UPSTREAM_LIMITS.urlChars} characters (it offers: ${offered})`,
    );
  }
  const capabilities = isObject(card.capabilities) ? card.capabilities : {};
  const skills = Array.isArray(card.skills)
    ? card.skills
        .map((skill) => (isObject(skill) ? (text(skill.name) ?? text(skill.id)) : text(skill)))
        .filter((skill): skill is string => skill !== null)
        .map((skill) => skill.slice(0, AGENT_LIMITS.skillChars))
    : [];
  return {
    url: chosen.url,
    binding: chosen.binding,
    protocol_version: chosen.version,
    streaming: capabilities.streaming === true,
    push_notifications: capabilities.pushNotifications === true,
    name: (text(card.name) ?? 'A2A agent').slice(0, AGENT_LIMITS.nameChars),
    description: text(card.description)?.slice(0, AGENT_LIMITS.descriptionChars) ?? null,
    skills: [...new Set(skills)].slice(0, AGENT_LIMITS.skills),
    api_key_header: apiKeyHeaderOf(card),
    oauth2_token_url: oauth2TokenUrlOf(card),
    security: securityOf(card),
  };
}
