/** Orgs as the admin API answers them (docs/orgs.md), without the schema classes that validate requests. */
import type { TrustPolicy } from '../directory/agent.model';
import type { ChainPolicy } from '../tasks/chain-rules';

/** An org's name: the part of a handle after `@` (the same rule as HANDLE_PATTERN's org, and a CHECK in the directory schema). */
export const ORG_PATTERN = /^[a-z0-9][a-z0-9.-]{0,126}$/;

/**
 * An org's A2A tenant (docs/orgs.md#an-orgs-own-a2a-address): the `tenant` of the extra interfaces on
 * its agents' cards, and one segment of the HTTP+JSON paths `/a2a/{handle}/{tenant}/…`. Lowercase
 * letters, digits, `.`, `_` and `-` (not first), so that it needs no escaping in a path.
 */
export const TENANT_PATTERN = /^[a-z0-9][a-z0-9._-]{0,62}$/;

/** Segments an agent endpoint's own HTTP+JSON paths begin with, which a tenant segment could be mistaken for. */
export const RESERVED_TENANTS: ReadonlySet<string> = new Set(['tasks', 'v1']);

/** Why `tenant` cannot be an org's tenant, or null when it can. */
export function tenantProblem(tenant: string): string | null {
  if (!TENANT_PATTERN.test(tenant)) return 'tenant must be 1 to 63 lowercase letters, digits, ".", "_" or "-" (not first)';
  if (RESERVED_TENANTS.has(tenant)) return `tenant cannot be "${tenant}": the agent endpoints' own paths begin with it`;
  return null;
}

export const ORG_LIMITS = {
  nameChars: 127,
  tenantChars: 63,
  displayNameChars: 200,
  /** The most agents an org's quota may name. */
  maxAgentsQuota: 1_000_000,
  maxRequestsPerMinuteQuota: 10_000_000,
  maxOpenHandoffsQuota: 10_000_000,
  /** The most bytes an org's stored-bytes quota may name (1 TiB). */
  maxStoredBytesQuota: 1_099_511_627_776,
  maxUpstreamInFlightQuota: 10_000,
  /** The longest approvals Slack URL an org may set (sealed, it still fits a delivery's URL column). */
  approvalsSlackUrlChars: 1024,
  listDefaultLimit: 50,
  listMaxLimit: 200,
} as const;

/** How an org came to exist: an admin created it, or an agent was registered in it while none existed (RELAY_ORGS_EXPLICIT=false). */
export type OrgOrigin = 'admin' | 'first_use';

/** An org's limits; null: no limit of the org's own (the per-agent limits still apply). */
export interface OrgQuotas {
  /** Agents registered in the org, disabled ones included. */
  agents: number | null;
  /** Calls per minute across the org's agents, counted as each agent's own rate limit is (fixed one-minute windows). */
  requests_per_minute: number | null;
  /** Handoffs sent by the org's agents and not yet finished (OPEN_HANDOFF_STATES). */
  open_handoffs: number | null;
  /** Bytes of messages and artifacts the org's agents wrote into handoffs still stored (counted against the writer's org). */
  stored_bytes: number | null;
  /** Deliveries to the org's upstream agents that a notifier process attempts at once; more wait for a slot. */
  upstream_in_flight: number | null;
}

export interface OrgQuotasReply {
  org: string;
  quotas: OrgQuotas;
}

/** What an org gives its agents by default. */
export interface OrgDefaults {
  /** The trust policy an agent registered in the org starts with (allow, block, hold, tool_prompts, chain); null: the relay's (teammates only). */
  trust: Omit<TrustPolicy, 'handle' | 'updated_at'> | null;
}

/**
 * An org's approvals Slack channel as the admin API shows it: whether one is set and its host, never
 * the URL (an incoming-webhook URL is its own credential).
 */
export interface ApprovalsSlackUrlView {
  configured: boolean;
  host: string | null;
}

/** Where the org's people are told of what they decide (docs/orgs.md#approvals-notifications). */
export interface OrgNotificationsView {
  approvals_slack_url: ApprovalsSlackUrlView;
}

export interface OrgRecord {
  name: string;
  display_name: string | null;
  defaults: OrgDefaults;
  quotas: OrgQuotas;
  /** Chain bounds for the handoffs to the org's agents, over the relay's and under each recipient's trust policy's (docs/chains.md); `{}`: none of its own. */
  chain: ChainPolicy;
  origin: OrgOrigin;
  /** The org's A2A tenant: its agents' cards gain interfaces carrying it, and requests naming it are accepted; null: none (the cards as before). */
  tenant: string | null;
  /**
   * Its approvals notifications, kept by the notifier and added by the edge; absent when the
   * notifier did not answer (the directory's record alone).
   */
  notifications?: OrgNotificationsView;
  /** Agents registered in the org now, disabled ones included. */
  agents: number;
  created_at: string;
  updated_at: string;
}

export interface OrgPage {
  items: OrgRecord[];
  next_cursor: string | null;
}
