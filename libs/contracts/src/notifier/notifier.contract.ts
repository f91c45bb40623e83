import { Type } from 'class-transformer';
import { IsIn, IsInt, IsISO8601, IsOptional, IsString, IsUUID, Matches, Max, MaxLength, Min } from 'class-validator';
import type { HandleRequest } from '../directory/directory.contract';
import type {
  PutUpstreamTlsRequest,
  ResolveUpstreamReply,
  ResolveUpstreamRequest,
  UpstreamCallsReply,
  UpstreamChangeDecisionReply,
  UpstreamCallsRequest,
  UpstreamRefreshReply,
  UpstreamStatusView,
} from '../upstream/upstream.contract';

/** Request subjects the notifier answers. */
export const NOTIFIER_SUBJECTS = {
  /** Makes a new webhook signing secret for an agent, replacing the previous one. */
  rotateWebhookSecret: 'relay.notifier.v1.webhook_secret.rotate',
  /**
   * Makes the first webhook signing secret of an agent being registered (the directory asks, inside
   * its registration transaction, and commits the agent only with the secret in hand).
   */
  provisionWebhookSecret: 'relay.notifier.v1.webhook_secret.provision',
  /** Lists deliveries, newest first (admin API). */
  listDeliveries: 'relay.notifier.v1.deliveries.list',
  /** One delivery with every attempt made (admin API). */
  getDelivery: 'relay.notifier.v1.deliveries.get',
  /** Sends a delivery again (admin API), whatever its status. */
  redeliver: 'relay.notifier.v1.deliveries.redeliver',
  /**
   * Reads an upstream agent's card (through the SSRF guard), picks the interface the relay
   * delivers to and keeps the credential for it sealed (admin API, before the directory stores it).
   */
  resolveUpstream: 'relay.notifier.v1.upstream.resolve',
  /**
   * An upstream agent's A2A server pushed a notification about a task the relay delivered to it
   * (the edge's receiver asks, with the token the relay gave that task): the task is polled at once.
   */
  upstreamPushed: 'relay.notifier.v1.upstream.pushed',
  /** An upstream agent's accepted card, pending card change, mTLS identity and health (admin API). */
  upstreamStatus: 'relay.notifier.v1.upstream.status',
  /** Reads the agent's card again now: harmless changes take effect, others wait for review (admin API). */
  refreshUpstreamCard: 'relay.notifier.v1.upstream.card.refresh',
  /** An operator accepts the pending card change: deliveries use the new card from here on. */
  acceptUpstreamChange: 'relay.notifier.v1.upstream.change.accept',
  /** An operator rejects the pending card change: the accepted card stays, and the same change is not proposed again. */
  rejectUpstreamChange: 'relay.notifier.v1.upstream.change.reject',
  /** Replaces the agent's mTLS client certificate and key (sealed). */
  putUpstreamTls: 'relay.notifier.v1.upstream.tls.put',
  /** Removes the agent's mTLS client identity. */
  deleteUpstreamTls: 'relay.notifier.v1.upstream.tls.delete',
  /** The calls the relay made to an upstream agent's server for one relay task (admin task timeline). */
  upstreamCalls: 'relay.notifier.v1.upstream.calls.list',
} as const;

/** A push notification's claim: which relay task it is about, and the token the relay gave that task. */
export class UpstreamPushedRequest {
  @IsString()
  @MaxLength(255)
  @Matches(/^\S+$/, { message: 'task_id must be a task id' })
  task_id!: string;

  @IsString()
  @MaxLength(512)
  token!: string;
}

export interface UpstreamPushedReply {
  accepted: true;
}

/** Webhook secrets are `whsec_` + base64 of 24 or more random bytes (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export class RotateWebhookSecretRequest {
  @IsString()
  @MaxLength(255)
  @Matches(/^\S+$/, { message: 'handle must be an agent handle' })
  handle!: string;

  /**
   * ISO-8601 time after which the caller no longer waits for the answer: a request that reaches
   * the notifier later (it was stalled) is refused, so no secret is ever stored that nobody was shown.
   */
  @IsOptional()
  @IsISO8601()
  not_after?: string;
}

export interface RotateWebhookSecretReply {
  /** Shown once; the notifier keeps it to sign deliveries and never logs it. */
  webhook_secret: string;
}

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

export class ListDeliveriesRequest {
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;

  @IsOptional()
  @IsString()
  @MaxLength(255)
  task_id?: string;

  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(500)
  limit?: number;
}

export class RedeliverRequest {
  @IsUUID()
  id!: string;
}

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

export interface NotifierRpc {
  [NOTIFIER_SUBJECTS.rotateWebhookSecret]: { request: RotateWebhookSecretRequest; reply: RotateWebhookSecretReply };
  [NOTIFIER_SUBJECTS.provisionWebhookSecret]: { request: RotateWebhookSecretRequest; reply: RotateWebhookSecretReply };
  [NOTIFIER_SUBJECTS.listDeliveries]: { request: ListDeliveriesRequest; reply: ListDeliveriesReply };
  [NOTIFIER_SUBJECTS.getDelivery]: { request: RedeliverRequest; reply: DeliveryDetail };
  [NOTIFIER_SUBJECTS.redeliver]: { request: RedeliverRequest; reply: DeliveryView };
  [NOTIFIER_SUBJECTS.resolveUpstream]: { request: ResolveUpstreamRequest; reply: ResolveUpstreamReply };
  [NOTIFIER_SUBJECTS.upstreamPushed]: { request: UpstreamPushedRequest; reply: UpstreamPushedReply };
  [NOTIFIER_SUBJECTS.upstreamStatus]: { request: HandleRequest; reply: UpstreamStatusView };
  [NOTIFIER_SUBJECTS.refreshUpstreamCard]: { request: HandleRequest; reply: UpstreamRefreshReply };
  [NOTIFIER_SUBJECTS.acceptUpstreamChange]: { request: HandleRequest; reply: UpstreamChangeDecisionReply };
  [NOTIFIER_SUBJECTS.rejectUpstreamChange]: { request: HandleRequest; reply: UpstreamChangeDecisionReply };
  [NOTIFIER_SUBJECTS.putUpstreamTls]: { request: PutUpstreamTlsRequest; reply: UpstreamStatusView };
  [NOTIFIER_SUBJECTS.deleteUpstreamTls]: { request: HandleRequest; reply: UpstreamStatusView };
  [NOTIFIER_SUBJECTS.upstreamCalls]: { request: UpstreamCallsRequest; reply: UpstreamCallsReply };
}
