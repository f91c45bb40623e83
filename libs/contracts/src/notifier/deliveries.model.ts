/** The notifier's delivery log as the admin API shows it (`GET /admin/deliveries`, redeliveries, the overview's failure counts). */

/**
 * - `pending`: recorded, waiting for its first attempt (or a redelivery);
 * - `failed`: the last attempt failed, another one is scheduled;
 * - `succeeded`: a 2xx answer;
 * - `dead`: out of attempts, or refused (SSRF guard, no target): a dead letter.
 */
export const DELIVERY_STATUSES = ['pending', 'failed', 'succeeded', 'dead'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** Where a delivery goes: an agent's webhook, its Slack incoming webhook, an A2A push config, or the A2A server of an upstream agent. */
export const DELIVERY_CHANNELS = ['webhook', 'slack', 'push', 'upstream'] as const;
export type DeliveryChannel = (typeof DELIVERY_CHANNELS)[number];

export interface DeliveryView {
  id: string;
  /** The task event this delivery comes from. */
  event_id: string;
  task_id: string;
  /** Webhook event name, e.g. `a2a.task.completed`. */
  event: string;
  channel: DeliveryChannel;
  /** Handle of the agent notified. */
  target_handle: string;
  /** Scheme and host of the target URL only (the full URL may carry credentials). */
  target_host: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
  delivered_at: string | null;
}

export interface DeliveryAttemptView {
  attempt_no: number;
  status_code: number | null;
  error: string | null;
  /** Null while the attempt is in flight, or when the notifier stopped before its outcome was known. */
  duration_ms: number | null;
  attempted_at: string;
}

export interface DeliveryDetail extends DeliveryView {
  attempt_log: DeliveryAttemptView[];
}

export interface ListDeliveriesReply {
  deliveries: DeliveryView[];
}

export const REDELIVERABLE_STATUSES = ['failed', 'dead'] as const;

export interface RedeliverManyReply {
  redelivered: number;
}

export interface FailureCountsReply {
  failed: number;
  dead: number;
}
