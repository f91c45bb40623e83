/**
 * The admin API's answers as the console reads them (snake_case JSON under `/admin/…`). The task
 * view is the tasks service's own model; the rows, hits and counts are the admin routes' shapes.
 */
import type { ArtifactView, Intent, MessageView, TaskHold, TaskState, TaskView } from '@app/contracts/model';

export { INTENTS, TASK_STATES, type ArtifactView, type Intent, type MessageView, type TaskHold, type TaskState, type TaskView } from '@app/contracts/model';

export interface Party {
  handle: string;
  name: string;
}

export interface AdminTaskRow {
  id: string;
  context_id: string;
  state: TaskState;
  intent: Intent;
  summary: string;
  sender: Party;
  recipient: Party;
  message_count: number;
  artifact_count: number;
  created_at: string;
  updated_at: string;
  status_timestamp: string;
  /** Set on a handoff a hold rule kept for approval. */
  hold?: Pick<TaskHold, 'rule' | 'expires_at' | 'four_eyes' | 'outcome'> | null;
}

export type ApprovalDecision = 'approve' | 'deny';

export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

export interface TimelineEntry {
  position: string;
  event: string;
  at: string;
  actor: string | null;
  state: string;
  message?: MessageView;
  artifact?: ArtifactView;
  reason?: string | null;
}

export interface AuditRow {
  at: string;
  actor: string | null;
  action: string;
  from_state: string | null;
  to_state: string | null;
}

export interface TaskDetail {
  task: TaskView;
  /** Oldest first; cut to fit one reply when `timeline_truncated`. */
  timeline: TimelineEntry[];
  timeline_truncated: boolean;
  audit: AuditRow[];
  messages_truncated: boolean;
  /** Set when the relay left what agents wrote out of the answer (the auditor role). */
  bodies_hidden?: true;
}

/** One event of `GET /admin/events` (SSE `event: task`). */
export interface LiveTaskEvent {
  position: string;
  event: string;
  task_id: string;
  state: TaskState;
  intent: Intent;
  summary: string;
  sender: string;
  recipient: string;
  at: string;
}

export interface HighlightFragment {
  text: string;
  match: boolean;
}

export interface SearchHighlight {
  source: 'message' | 'artifact';
  sequence_no?: number;
  artifact_name?: string;
  fragments: HighlightFragment[];
}

export interface SearchHit {
  task: AdminTaskRow;
  rank: number;
  highlights: SearchHighlight[];
}

export type ConsoleRole = 'auditor' | 'viewer' | 'approver' | 'operator' | 'admin';

/** Who signed in through OIDC; null for a sign-in with the admin token. */
export interface SessionPerson {
  issuer: string;
  sub: string;
  email: string | null;
  name: string | null;
}

export interface SessionInfo {
  csrf_token: string;
  expires_at: string;
  session: string;
  role: ConsoleRole;
  person: SessionPerson | null;
}

/** How this relay lets people sign in to the console. */
export interface SignInMethods {
  admin_token: boolean;
  oidc: { start_url: string } | null;
}

export interface AgentRecord {
  id: string;
  handle: string;
  name: string;
  role: string | null;
  description: string | null;
  skills: string[];
  metadata: Record<string, unknown>;
  email: string | null;
  notification_webhook_url: string | null;
  slack_webhook_url: string | null;
  disabled: boolean;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
  /** Set on an agent that runs its own A2A server (an upstream agent). */
  upstream?: UpstreamInterface | null;
}

/** The accepted card of an upstream agent: where and how the relay delivers its handoffs (the credential is never shown). */
export interface UpstreamInterface {
  card_url: string;
  url: string;
  binding: 'JSONRPC' | 'HTTP+JSON';
  protocol_version: '0.3' | '1.0';
  streaming: boolean;
  push_notifications: boolean;
  auth_scheme: 'none' | 'api_key' | 'bearer' | 'oauth2';
  auth_header: string | null;
  card_fetched_at: string;
}

export interface UpstreamCardChange {
  field: string;
  old: unknown;
  new: unknown;
  review: boolean;
}

export interface UpstreamPendingChange {
  detected_at: string;
  card_fetched_at: string;
  changes: UpstreamCardChange[];
}

export type UpstreamBreaker = 'closed' | 'open' | 'half_open';

/** `GET /admin/agents/{handle}/upstream`: an upstream agent's accepted card, pending change, mTLS identity and health. */
export interface UpstreamStatusView {
  handle: string;
  upstream: UpstreamInterface;
  card: { last_refresh_at: string | null; last_refresh_error: string | null; pending_change: UpstreamPendingChange | null };
  tls: { client_cert_subject: string; client_cert_not_after: string; ca: boolean; updated_at: string } | null;
  health: {
    last_success_at: string | null;
    last_failure_at: string | null;
    last_failure_method: string | null;
    last_failure_reason: string | null;
    breaker: UpstreamBreaker;
  };
}

export type UpstreamRefreshOutcome = 'unchanged' | 'applied' | 'pending' | 'rejected_before' | 'failed';

export interface UpstreamRefreshReply extends UpstreamStatusView {
  refresh: { outcome: UpstreamRefreshOutcome; changes: UpstreamCardChange[]; error: string | null };
}

export type UpstreamChangeDecision = 'accept' | 'reject';

export interface UpstreamChangeDecisionReply extends UpstreamStatusView {
  decided: UpstreamPendingChange;
}

/** One HTTP request the relay made to an upstream agent's server for a task. */
export interface UpstreamCallView {
  at: string;
  handle: string;
  method: string;
  outcome: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

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

export interface ApiKeyInfo {
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

export interface RegisteredAgent {
  agent: AgentRecord;
  api_key: string;
  key: ApiKeyInfo;
  webhook_secret: string;
}

export interface CreatedKey {
  api_key: string;
  key: ApiKeyInfo;
}

/** A hold rule of a trust policy (libs/contracts/src/directory/hold-rules.ts); the console shows and writes it back as it came. */
export interface HoldRule {
  name: string;
  senders?: string[];
  outside_org?: boolean;
  intents?: string[];
  artifact_kinds?: string[];
  paths?: string[];
  expires_after_minutes?: number;
  four_eyes?: boolean;
}

export interface TrustPolicy {
  handle: string;
  allow: string[];
  block: string[];
  hold: HoldRule[];
  updated_at: string | null;
}

export interface AgentCounts {
  inbox: Partial<Record<TaskState, number>>;
  sent: Partial<Record<TaskState, number>>;
}

export const DELIVERY_STATUSES = ['failed', 'dead', 'pending', 'succeeded'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export interface DeliveryView {
  id: string;
  event_id: string;
  task_id: string;
  event: string;
  channel: 'webhook' | 'slack' | 'push';
  target_handle: string;
  target_host: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface DeliveryAttempt {
  attempt_no: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  attempted_at: string;
}

export interface DeliveryDetail extends DeliveryView {
  attempt_log: DeliveryAttempt[];
}

export interface Overview {
  per_minute: Array<{ minute: string; created: number; completed: number }>;
  open_by_state: { pending: number; accepted: number; input_required: number };
  oldest_pending: { id: string; created_at: string; sender: string | Party; recipient: string | Party } | null;
  delivery_failures: { failed: number; dead: number };
  outbox_lag: { unpublished: number; oldest_unpublished_ms: number | null };
}

export interface ApiErrorBody {
  error: { reason: string; message: string; fields?: Array<{ field: string; messages: string[] }>; data?: Record<string, unknown> };
}
