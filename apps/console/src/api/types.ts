/**
 * The admin API's answers as the console reads them (snake_case JSON under `/admin/…`): the
 * contracts' own models under the console's names, and what only the console has (its session,
 * the sign-in methods, the bodies it writes).
 */
import type {
  AdminErrorBody,
  AdminParty,
  AdminSearchHit,
  AdminSearchPage,
  AdminTaskChain,
  AdminTaskDetail,
  AdminTaskPage,
  AdminTaskEvent,
  AdminCountsReply,
  AdminOverview,
  CreateAgentReply,
  CreateKeyReply,
  DeliveryAttemptView,
  TaskAuditRow,
  UpstreamAuthScheme,
  WithHiddenBodies,
  OrgQuotas,
} from '@app/contracts/model';

export {
  DELIVERY_STATUSES,
  INTENTS,
  TASK_STATES,
  TOOL_PROMPT_LIMITS,
  type AdminChainRefusal,
  type AdminTaskRow,
  type AgentPage,
  type AgentRecord,
  type ApiKeyInfo,
  type ApprovalDecision,
  type ArtifactView,
  type DeliveryDetail,
  type DeliveryStatus,
  type DeliveryView,
  type HighlightFragment,
  type HoldRule,
  type Intent,
  type MessageView,
  type PendingToolPrompt,
  type PendingToolPromptsReply,
  type PermissionDecision,
  type PermissionRequest,
  type SearchHighlight,
  type TaskHold,
  type TaskState,
  type TaskView,
  type TimelineEntry,
  type ToolPromptAnswerRecord,
  type TaskToolPrompts,
  type TrustPolicy,
  type UpstreamBreaker,
  type UpstreamCallView,
  type UpstreamCardChange,
  type UpstreamChangeDecisionReply,
  type UpstreamInterface,
  type UpstreamPendingChange,
  type UpstreamRefreshOutcome,
  type UpstreamRefreshReply,
  type UpstreamStatusView,
  ORG_LIMITS,
  type OrgOrigin,
  type OrgPage,
  type OrgPeoplePage,
  type OrgPerson,
  type OrgQuotas,
  type OrgRecord,
} from '@app/contracts/model';

export type Party = AdminParty;
export type TaskPage = AdminTaskPage;
export type SearchPage = AdminSearchPage;
export type SearchHit = AdminSearchHit;
export type AuditRow = TaskAuditRow;
export type TaskDetail = WithHiddenBodies<AdminTaskDetail>;
export type TaskChainView = WithHiddenBodies<AdminTaskChain>;
export type LiveTaskEvent = AdminTaskEvent;
export type RegisteredAgent = CreateAgentReply;
export type CreatedKey = CreateKeyReply;
export type AgentCounts = AdminCountsReply;
export type DeliveryAttempt = DeliveryAttemptView;
export type Overview = AdminOverview;
export type ApiErrorBody = AdminErrorBody;

export type ConsoleRole = 'auditor' | 'viewer' | 'approver' | 'operator' | 'admin';

/** Who signed in through OIDC; null for a sign-in with the admin token. */
export interface SessionPerson {
  issuer: string;
  sub: string;
  email: string | null;
  /** Whether the provider verified that email: four eyes count only a verified one. */
  email_verified: boolean;
  name: string | null;
}

/** A role in one org (`payments: approver`), or relay-wide (`org: null`). */
export interface RoleGrant {
  org: string | null;
  role: ConsoleRole;
}

export interface SessionInfo {
  csrf_token: string;
  expires_at: string;
  session: string;
  /** The strongest of `grants`. */
  role: ConsoleRole;
  /** Every role of the person: one per org, and a relay-wide one (the admin token: relay-wide admin). */
  grants: RoleGrant[];
  person: SessionPerson | null;
}

/** How this relay lets people sign in to the console. */
export interface SignInMethods {
  admin_token: boolean;
  oidc: { start_url: string } | null;
}

export type UpstreamChangeDecision = 'accept' | 'reject';

/** The fields of an agent's card an admin edits; `null` clears a field. */
export interface AgentCardFields {
  name?: string;
  role?: string | null;
  description?: string | null;
  skills?: string[];
  email?: string | null;
  notification_webhook_url?: string | null;
  slack_webhook_url?: string | null;
}

export interface NewAgent extends AgentCardFields {
  handle: string;
  name: string;
}

/** The credential the relay presents to an upstream agent, as `POST /admin/agents` takes it (write-only: never shown again). */
export interface NewUpstreamAuth {
  scheme: Exclude<UpstreamAuthScheme, 'none'>;
  secret: string;
  header_name?: string;
  client_id?: string;
  token_url?: string;
  scope?: string;
  resource?: string;
}

/** An agent that runs its own A2A server: the relay reads its card at `card_url`. */
export interface NewUpstreamAgent extends NewAgent {
  upstream: { card_url: string; auth?: NewUpstreamAuth };
}

/** What `PATCH /admin/orgs/{name}` changes from the console: its display name and quotas (`null`: none, no limit). */
export interface OrgChanges {
  display_name?: string | null;
  quotas?: Partial<OrgQuotas>;
}

/** `POST /admin/orgs` from the console. */
export interface NewOrg extends OrgChanges {
  name: string;
}
