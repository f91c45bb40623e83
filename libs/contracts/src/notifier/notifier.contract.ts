import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import type { HandleRequest } from '../directory/directory.contract';
import { ORG_LIMITS, ORG_PATTERN, type ApprovalsSlackUrlView } from '../orgs/orgs.contract';
import type { PutUpstreamTlsRequest, ResolveUpstreamRequest, UpstreamCallsRequest } from '../upstream/upstream.contract';
import type {
  ResolveUpstreamReply,
  UpstreamCallsReply,
  UpstreamChangeDecisionReply,
  UpstreamRefreshReply,
  UpstreamStatusView,
} from '../upstream/upstream.model';
import { DELIVERY_STATUSES, type DeliveryDetail, type DeliveryStatus, type DeliveryView, type ListDeliveriesReply } from './deliveries.model';

/** Request subjects the notifier answers. */
export const NOTIFIER_SUBJECTS = {
  /** Stores a new webhook signing secret for an agent (made by the caller, sealed to the notifier's key), replacing the previous one. */
  rotateWebhookSecret: 'relay.notifier.v1.webhook_secret.rotate',
  /**
   * Stores the first webhook signing secret of an agent being registered (the directory makes it and
   * asks, inside its registration transaction, and commits the agent only once the notifier stored it).
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
  /**
   * Sets or clears an org's approvals Slack channel (sealed to the notifier's key), after checking it
   * by the outbound rules; with `check_only`, only checks it (admin API, before the org is written).
   */
  putOrgApprovals: 'relay.notifier.v1.org_approvals.put',
  /** Whether each of these orgs has an approvals Slack channel, and its host (admin API's org reads). */
  orgApprovals: 'relay.notifier.v1.org_approvals.list',
} as const;

export class PutOrgApprovalsRequest {
  @IsString()
  @Matches(ORG_PATTERN)
  org!: string;

  /** The org's approvers' Slack incoming-webhook URL sealed to the notifier's key; null: none. */
  @ValidateIf((_, value) => value !== null)
  @IsString()
  @MaxLength(8192)
  sealed_slack_url!: string | null;

  /** Only check the URL: nothing is stored. */
  @IsOptional()
  @IsBoolean()
  check_only?: boolean;
}

export class OrgApprovalsRequest {
  @IsArray()
  @ArrayMaxSize(ORG_LIMITS.listMaxLimit)
  @IsString({ each: true })
  orgs!: string[];
}

/** An org's approvals channel as the notifier holds it: never the URL. */
export interface OrgApprovalsView {
  org: string;
  approvals_slack_url: ApprovalsSlackUrlView;
}

export interface OrgApprovalsReply {
  items: OrgApprovalsView[];
}

/** A push notification's claim: which relay task it is about, and the token the relay gave that task. */
export class UpstreamPushedRequest {
  /** A lookup key: a string that is no followed task's id is an unknown task (`unauthenticated`). */
  @IsString()
  @IsNotEmpty()
  task_id!: string;

  @IsString()
  token!: string;
}

export interface UpstreamPushedReply {
  accepted: true;
}

/** Webhook secrets are `whsec_` + base64 of 24 or more random bytes (Standard Webhooks). */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export class RotateWebhookSecretRequest {
  @IsString()
  handle!: string;

  /** The new secret (`whsec_` + base64 of 24 to 64 random bytes), sealed to the notifier's key: no other NATS user reads it. */
  @IsString()
  sealed_webhook_secret!: string;

  /**
   * ISO-8601 time after which the caller no longer waits for the answer: a request that reaches
   * the notifier later (it was stalled) is refused, so no secret is ever stored that nobody was shown.
   */
  @IsOptional()
  @IsISO8601()
  not_after?: string;
}

/** A new agent's first secret (the directory asks inside its registration): an upstream agent's kept registration is committed with it. */
export class ProvisionWebhookSecretRequest extends RotateWebhookSecretRequest {
  /** The id `upstream.resolve` answered: the credential, client identity and card it checked become the agent's. */
  @IsOptional()
  @IsUUID()
  upstream_registration?: string;
}

/** The secret is stored: the notifier signs the agent's deliveries with it from now on (it never logs it or gives it back). */
export interface RotateWebhookSecretReply {
  stored: true;
}

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

  /** Only deliveries to agents of these orgs (a person's scope, set by the edge); absent: all. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export class RedeliverRequest {
  @IsUUID()
  id!: string;
}

export interface NotifierRpc {
  [NOTIFIER_SUBJECTS.rotateWebhookSecret]: { request: RotateWebhookSecretRequest; reply: RotateWebhookSecretReply };
  [NOTIFIER_SUBJECTS.provisionWebhookSecret]: { request: ProvisionWebhookSecretRequest; reply: RotateWebhookSecretReply };
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
  [NOTIFIER_SUBJECTS.putOrgApprovals]: { request: PutOrgApprovalsRequest; reply: OrgApprovalsView };
  [NOTIFIER_SUBJECTS.orgApprovals]: { request: OrgApprovalsRequest; reply: OrgApprovalsReply };
}
