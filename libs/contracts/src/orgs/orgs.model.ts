/** Orgs as the admin API answers them (docs/orgs.md), without the schema classes that validate requests. */
import type { TrustPolicy } from '../directory/agent.model';
import type { ChainPolicy } from '../tasks/chain-rules';

/** An org's name: the part of a handle after `@` (the same rule as HANDLE_PATTERN's org, and a CHECK in the directory schema). */
export const ORG_PATTERN = /^[a-z0-9][a-z0-9.-]{0,126}$/;

export const ORG_LIMITS = {
  nameChars: 127,
  displayNameChars: 200,
  /** The most agents an org's quota may name. */
  maxAgentsQuota: 1_000_000,
  maxRequestsPerMinuteQuota: 10_000_000,
  maxOpenHandoffsQuota: 10_000_000,
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
