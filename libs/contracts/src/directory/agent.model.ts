import type { UpstreamInterface } from '../upstream/upstream.model';
import type { AgentOwner } from './agent-owner';
import type { HoldRule, ToolPromptRule } from './hold-rules';
import type { ChainPolicy } from '../tasks/chain-rules';

/** An authenticated caller, as the directory answers `authenticate`. */
export interface AgentIdentity {
  id: string;
  handle: string;
  name: string;
  role: string | null;
  /** The part of the handle after `@`. */
  org: string;
}

/** Public profile of an agent: never email or webhook URLs. */
export interface AgentPublicProfile extends AgentIdentity {
  description: string | null;
  skills: string[];
  metadata: Record<string, unknown>;
  /** The media types (ranges such as `text/*` allowed) the agent accepts in parts sent to it; null: the relay's default. */
  input_modes: string[] | null;
}

/** Which token subject of which issuer authenticates as the agent (both null: none). */
export interface TokenSubject {
  handle: string;
  issuer: string | null;
  subject: string | null;
}

/** An agent as the admin API shows it, private fields included. */
export interface AgentRecord {
  id: string;
  handle: string;
  name: string;
  role: string | null;
  description: string | null;
  skills: string[];
  metadata: Record<string, unknown>;
  input_modes: string[] | null;
  /** The person who owns the agent, by their account at the console's OpenID Provider (four eyes refuse them); null: none on record. */
  owner: AgentOwner | null;
  /** The owner's email (the person responsible for the agent). */
  email: string | null;
  /** Whether the provider verified `email` as the owner's (it came from the owner's own sign-in); an unverified email proves nothing to four eyes. */
  email_verified: boolean;
  notification_webhook_url: string | null;
  slack_webhook_url: string | null;
  /** Null: the relay's default (RELAY_WEBHOOK_TIMEOUT_MS). */
  webhook_timeout_ms: number | null;
  /** Set for an agent that runs its own A2A server: where its handoffs are delivered (no credential). */
  upstream: UpstreamInterface | null;
  disabled: boolean;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyInfo {
  /** Display prefix: `ah_live_` and the key's first 8 characters; the key itself is never stored. */
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface CreateAgentReply {
  agent: AgentRecord;
  /** Shown once. */
  api_key: string;
  key: ApiKeyInfo;
  /** The agent's webhook signing secret (kept by the notifier), shown once. */
  webhook_secret: string;
}

export interface AgentPage {
  items: AgentRecord[];
  next_cursor: string | null;
}

export interface CreateKeyReply {
  api_key: string;
  key: ApiKeyInfo;
}

export interface ApiKeyList {
  items: ApiKeyInfo[];
}

export interface TrustPolicy {
  handle: string;
  allow: string[];
  block: string[];
  /** Hold rules, first match decides (empty: nothing is held). */
  hold: HoldRule[];
  /** Tool-prompt rules, first match decides (empty: every handoff's sender answers its tool prompts). */
  tool_prompts: ToolPromptRule[];
  /** Chain bounds of its own, each replacing the relay's for handoffs to this agent (empty: the relay's). */
  chain: ChainPolicy;
  /** Null while the agent has never had a policy set (the default: teammates only). */
  updated_at: string | null;
}

export interface AdmitReply {
  recipient: AgentPublicProfile;
  /**
   * The recipient's hold rules: the edge passes them with the create command, and the tasks
   * service decides with the handoff's content (`decideHold`) whether it is held.
   */
  hold: HoldRule[];
  /** The recipient's tool-prompt rules, passed and decided the same way (`decideToolPrompts`). */
  tool_prompts: ToolPromptRule[];
  /** The recipient's own chain bounds (docs/chains.md), passed with the create command. */
  chain: ChainPolicy;
  /** The chain bounds of the recipient's org, under the recipient's own, passed the same way (`{}` for none). */
  org_chain: ChainPolicy;
  /** The open-handoffs quota of the sender's org (docs/orgs.md#quotas), passed with the create command; null: none. */
  sender_org_open_handoffs: number | null;
}

/** The public profile behind an agent card. */
export interface AgentProfile extends AgentPublicProfile {
  /** When the card last changed: the agent's update, or its org's if later (an org's tenant is on the card). */
  updated_at: string;
  /** The A2A tenant of the agent's org (docs/orgs.md#an-orgs-own-a2a-address); null: none. */
  tenant: string | null;
}

/** Why an admission was refused, in `error.data.policy` of `teammate_blocked`. */
export type AdmissionPolicy = 'blocked' | 'not_allowed';
