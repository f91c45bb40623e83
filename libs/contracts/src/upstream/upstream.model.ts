import { z } from 'zod';

/** Upstream agents (agents that run their own A2A server) as the relay keeps and shows them: the accepted interface, card changes, calls and health. */

/** The A2A protocol bindings the relay can deliver to (gRPC is not one of them). */
export const UPSTREAM_BINDINGS = ['JSONRPC', 'HTTP+JSON'] as const;
export type UpstreamBinding = (typeof UPSTREAM_BINDINGS)[number];

/** The A2A versions the relay speaks to an upstream agent. */
export const UPSTREAM_PROTOCOL_VERSIONS = ['0.3', '1.0'] as const;
export type UpstreamProtocolVersion = (typeof UPSTREAM_PROTOCOL_VERSIONS)[number];

/**
 * How the relay authenticates to an upstream agent: nothing, an API key in a header, an HTTP
 * bearer token, or OAuth2 client credentials (the relay gets bearer tokens from the token URL and
 * keeps them until they expire).
 */
export const UPSTREAM_AUTH_SCHEMES = ['none', 'api_key', 'bearer', 'oauth2'] as const;
export type UpstreamAuthScheme = (typeof UPSTREAM_AUTH_SCHEMES)[number];

/**
 * The interface of an agent that runs its own A2A server, as the relay read it from the agent's
 * card: where it delivers the agent's handoffs, in which binding and version, and how it
 * authenticates there (the credential itself is kept sealed by the notifier, never here).
 */
export const upstreamInterfaceSchema = z
  .object({
    card_url: z.string(),
    url: z.string(),
    binding: z.enum(UPSTREAM_BINDINGS),
    protocol_version: z.enum(UPSTREAM_PROTOCOL_VERSIONS),
    streaming: z.boolean(),
    push_notifications: z.boolean(),
    auth_scheme: z.enum(UPSTREAM_AUTH_SCHEMES),
    auth_header: z.string().nullable().meta({ description: 'The header an `api_key` goes in (`Authorization` for `bearer` and `oauth2`, null for `none`).' }),
    card_fetched_at: z.string(),
  })
  .meta({ title: 'UpstreamInterface' });
export type UpstreamInterface = z.infer<typeof upstreamInterfaceSchema>;

/** The public profile the card offers (a registration without its own name, description or skills takes these). */
export interface UpstreamCardProfile {
  name: string;
  description: string | null;
  skills: string[];
}

export interface ResolveUpstreamReply {
  /** What the directory's registration commits (the checked credential, client identity and card), once it holds the handle. */
  registration: string;
  upstream: UpstreamInterface;
  card: UpstreamCardProfile;
}

/** The card fields a refresh compares: a change to one marked `review` waits for an operator. */
export const UPSTREAM_CARD_FIELDS = [
  'url',
  'binding',
  'protocol_version',
  'streaming',
  'push_notifications',
  'security',
  'name',
  'description',
  'skills',
] as const;
export type UpstreamCardField = (typeof UPSTREAM_CARD_FIELDS)[number];

/** What the relay keeps of a card to compare the next read with (`security`: the card's security schemes and requirements, normalised). */
export interface UpstreamCardSnapshot {
  url: string;
  binding: UpstreamBinding;
  protocol_version: UpstreamProtocolVersion;
  streaming: boolean;
  push_notifications: boolean;
  security: unknown;
  name: string;
  description: string | null;
  skills: string[];
}

/** One field a refreshed card changed: what the relay delivers against (`old`) and what the card now says (`new`). */
export interface UpstreamCardChange {
  field: UpstreamCardField;
  old: unknown;
  new: unknown;
  /** True: it changes where or how the relay talks to the agent, or how it authenticates; it waits for an operator. */
  review: boolean;
}

/** A card change waiting for an operator: deliveries go on against the accepted card meanwhile. */
export interface UpstreamPendingChange {
  detected_at: string;
  card_fetched_at: string;
  /** Only the fields that need review (harmless ones took effect when read). */
  changes: UpstreamCardChange[];
}

export const UPSTREAM_CALL_METHODS = [
  'GetAgentCard',
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'CancelTask',
  'ListTasks',
  'SubscribeToTask',
  'OAuth2Token',
  'other',
] as const;
export type UpstreamCallMethod = (typeof UPSTREAM_CALL_METHODS)[number];

/**
 * How an upstream call ended: `ok`, or why not: `refused` (SSRF guard), `timeout`, `tls` (a
 * certificate refused either way), `connection`, `unauthorized` (401/403), `http_4xx`, `http_5xx`,
 * `a2a_error` (a JSON-RPC error in a 200 answer), `too_large` (an answer past the notifier's byte limit).
 */
export const UPSTREAM_CALL_OUTCOMES = [
  'ok',
  'refused',
  'timeout',
  'tls',
  'connection',
  'unauthorized',
  'http_4xx',
  'http_5xx',
  'a2a_error',
  'too_large',
] as const;
export type UpstreamCallOutcome = (typeof UPSTREAM_CALL_OUTCOMES)[number];

/** One HTTP request the relay made to an upstream agent's server for a relay task. */
export interface UpstreamCallView {
  at: string;
  handle: string;
  method: UpstreamCallMethod;
  outcome: UpstreamCallOutcome;
  status_code: number | null;
  /** Until the whole answer was read (of a stream: until its headers, its events come later). */
  duration_ms: number;
  error: string | null;
}

export interface UpstreamCallsReply {
  /** Oldest first, at most the newest 500. */
  calls: UpstreamCallView[];
}

export type UpstreamBreaker = 'closed' | 'open' | 'half_open';

/** `refreshed`: what one refresh did. */
export type UpstreamRefreshOutcome = 'unchanged' | 'applied' | 'pending' | 'rejected_before' | 'failed';

/** An upstream agent's card and health, as the admin API shows it. */
export interface UpstreamStatusView {
  handle: string;
  /** The interface deliveries use (the accepted card). */
  upstream: UpstreamInterface;
  card: {
    last_refresh_at: string | null;
    /** Why the last refresh could not read or use the card (null: it could). */
    last_refresh_error: string | null;
    pending_change: UpstreamPendingChange | null;
    /** The interface deliveries would use once the pending change is accepted (what an operator's acceptance writes to the directory). */
    pending_upstream: UpstreamInterface | null;
  };
  tls: { client_cert_subject: string; client_cert_not_after: string; ca: boolean; updated_at: string } | null;
  health: {
    last_success_at: string | null;
    last_failure_at: string | null;
    last_failure_method: UpstreamCallMethod | null;
    last_failure_reason: string | null;
    /** The circuit breaker of the upstream's host and port, in the notifier replica that answered. */
    breaker: UpstreamBreaker;
  };
}

export interface UpstreamRefreshReply extends UpstreamStatusView {
  refresh: { outcome: UpstreamRefreshOutcome; changes: UpstreamCardChange[]; error: string | null };
}

/** An operator's accept or reject: the agent as it is now, and the change decided. */
export interface UpstreamChangeDecisionReply extends UpstreamStatusView {
  decided: UpstreamPendingChange;
}
