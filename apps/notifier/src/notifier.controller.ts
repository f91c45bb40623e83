import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ADMIN_DELIVERIES_SUBJECTS,
  RedeliverManyRequest,
  FailureCountsRequest,
  type FailureCountsReply,
  type RedeliverManyReply,
  ListDeliveriesRequest,
  NOTIFIER_SUBJECTS,
  RedeliverRequest,
  ProvisionWebhookSecretRequest,
  RotateWebhookSecretRequest,
  type DeliveryDetail,
  type DeliveryView,
  type ListDeliveriesReply,
  type RotateWebhookSecretReply,
  ResolveUpstreamRequest,
  type ResolveUpstreamReply,
  UpstreamPushedRequest,
  type UpstreamPushedReply,
  HandleRequest,
  PutUpstreamTlsRequest,
  UpstreamCredentialFields,
  UpstreamTlsFields,
  UpstreamCallsRequest,
  type UpstreamCallsReply,
  type UpstreamChangeDecisionReply,
  type UpstreamRefreshReply,
  type UpstreamStatusView,
  PutOrgApprovalsRequest,
  OrgApprovalsRequest,
  type OrgApprovalsReply,
  type OrgApprovalsView,
} from '@app/contracts';
import { OrgApprovalChannelsService } from './approvals/org-approval-channels.service';
import { DeliveriesService } from './deliveries/deliveries.service';
import { DeliveryWorkerService } from './deliveries/delivery-worker.service';
import { SealedRequests } from './secrets/sealed-requests';
import { WebhookSecretsService } from './secrets/webhook-secrets.service';
import { UpstreamFollowerService } from './upstream/follow/upstream-follower.service';
import { UpstreamRegistrationsService } from './upstream/cards/upstream-registrations.service';
import { UpstreamResolverService } from './upstream/cards/upstream-resolver.service';
import { UpstreamCardsService } from './upstream/cards/upstream-cards.service';
import { UpstreamHealthService } from './upstream/health/upstream-health.service';
import { UpstreamTlsService } from './upstream/identity/upstream-tls.service';

/** The notifier's request subjects: webhook secrets, upstream agents' cards and credentials, and the delivery log (admin API). */
@Controller()
export class NotifierController {
  constructor(
    @Inject(WebhookSecretsService) private readonly secrets: WebhookSecretsService,
    @Inject(DeliveriesService) private readonly deliveries: DeliveriesService,
    @Inject(DeliveryWorkerService) private readonly worker: DeliveryWorkerService,
    @Inject(UpstreamResolverService) private readonly upstream: UpstreamResolverService,
    @Inject(UpstreamRegistrationsService) private readonly registrations: UpstreamRegistrationsService,
    @Inject(UpstreamFollowerService) private readonly follower: UpstreamFollowerService,
    @Inject(UpstreamCardsService) private readonly cards: UpstreamCardsService,
    @Inject(UpstreamTlsService) private readonly tls: UpstreamTlsService,
    @Inject(UpstreamHealthService) private readonly health: UpstreamHealthService,
    @Inject(SealedRequests) private readonly sealed: SealedRequests,
    @Inject(OrgApprovalChannelsService) private readonly orgApprovals: OrgApprovalChannelsService,
  ) {}

  /** An org's approvals Slack channel: checked (and, unless `check_only`, stored sealed); the reply never holds the URL. */
  @MessagePattern(NOTIFIER_SUBJECTS.putOrgApprovals)
  async putOrgApprovals(@Payload() request: PutOrgApprovalsRequest): Promise<OrgApprovalsView> {
    const url = request.sealed_slack_url === null ? null : await this.sealed.secret(request.sealed_slack_url, 'notifications.approvals_slack_url');
    if (request.check_only) {
      return {
        org: request.org,
        approvals_slack_url: url === null ? { configured: false, host: null } : { configured: true, host: this.orgApprovals.check(url) },
      };
    }
    return this.orgApprovals.put(request.org, url);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.orgApprovals)
  async orgApprovalsOf(@Payload() request: OrgApprovalsRequest): Promise<OrgApprovalsReply> {
    return { items: await this.orgApprovals.views(request.orgs) };
  }

  @MessagePattern(NOTIFIER_SUBJECTS.upstreamStatus)
  upstreamStatus(@Payload() request: HandleRequest): Promise<UpstreamStatusView> {
    return this.cards.status(request.handle);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.refreshUpstreamCard)
  refreshUpstreamCard(@Payload() request: HandleRequest): Promise<UpstreamRefreshReply> {
    return this.cards.refresh(request.handle);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.acceptUpstreamChange)
  acceptUpstreamChange(@Payload() request: HandleRequest): Promise<UpstreamChangeDecisionReply> {
    return this.cards.accept(request.handle);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.rejectUpstreamChange)
  rejectUpstreamChange(@Payload() request: HandleRequest): Promise<UpstreamChangeDecisionReply> {
    return this.cards.reject(request.handle);
  }

  /** Checked against the agent first: only an upstream agent has a client identity. */
  @MessagePattern(NOTIFIER_SUBJECTS.putUpstreamTls)
  async putUpstreamTls(@Payload() request: PutUpstreamTlsRequest): Promise<UpstreamStatusView> {
    const { handle } = await this.cards.status(request.handle);
    await this.tls.put(handle, await this.sealed.fields(UpstreamTlsFields, request.sealed_tls, 'sealed_tls'));
    return this.cards.status(handle);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.deleteUpstreamTls)
  async deleteUpstreamTls(@Payload() request: HandleRequest): Promise<UpstreamStatusView> {
    const { handle } = await this.cards.status(request.handle);
    await this.tls.remove(handle);
    return this.cards.status(handle);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.upstreamCalls)
  async upstreamCalls(@Payload() request: UpstreamCallsRequest): Promise<UpstreamCallsReply> {
    return { calls: await this.health.calls(request.task_id) };
  }

  @MessagePattern(NOTIFIER_SUBJECTS.upstreamPushed)
  async upstreamPushed(@Payload() request: UpstreamPushedRequest): Promise<UpstreamPushedReply> {
    await this.follower.pushed(request.task_id, request.token);
    return { accepted: true };
  }

  @MessagePattern(NOTIFIER_SUBJECTS.resolveUpstream)
  async resolveUpstream(@Payload() request: ResolveUpstreamRequest): Promise<ResolveUpstreamReply> {
    const credentials =
      request.sealed_credentials === undefined ? {} : await this.sealed.fields(UpstreamCredentialFields, request.sealed_credentials, 'sealed_credentials');
    return this.upstream.resolve({ handle: request.handle, card_url: request.card_url, ...credentials });
  }

  @MessagePattern(NOTIFIER_SUBJECTS.rotateWebhookSecret)
  rotateWebhookSecret(@Payload() request: RotateWebhookSecretRequest): Promise<RotateWebhookSecretReply> {
    return this.storeWebhookSecret(request);
  }

  /** A new agent's first webhook secret, asked by the directory while it holds the handle; an upstream agent's registration is made its own then too. */
  @MessagePattern(NOTIFIER_SUBJECTS.provisionWebhookSecret)
  async provisionWebhookSecret(@Payload() request: ProvisionWebhookSecretRequest): Promise<RotateWebhookSecretReply> {
    const reply = await this.storeWebhookSecret(request);
    if (request.upstream_registration !== undefined) await this.registrations.commit(request.upstream_registration, request.handle);
    return reply;
  }

  private async storeWebhookSecret(request: RotateWebhookSecretRequest): Promise<RotateWebhookSecretReply> {
    await this.secrets.rotate(request.handle, await this.sealed.secret(request.sealed_webhook_secret, 'sealed_webhook_secret'), request.not_after);
    return { stored: true };
  }

  @MessagePattern(NOTIFIER_SUBJECTS.listDeliveries)
  async listDeliveries(@Payload() request: ListDeliveriesRequest): Promise<ListDeliveriesReply> {
    return { deliveries: await this.deliveries.list(request) };
  }

  @MessagePattern(NOTIFIER_SUBJECTS.getDelivery)
  getDelivery(@Payload() request: RedeliverRequest): Promise<DeliveryDetail> {
    return this.deliveries.detail(request.id);
  }

  @MessagePattern(NOTIFIER_SUBJECTS.redeliver)
  async redeliver(@Payload() request: RedeliverRequest): Promise<DeliveryView> {
    const view = await this.deliveries.redeliver(request.id);
    this.worker.wake();
    return view;
  }

  /** Redelivers up to 1000 failed or dead deliveries (of one task, when named) at once. */
  @MessagePattern(ADMIN_DELIVERIES_SUBJECTS.redeliverMany)
  async redeliverMany(@Payload() request: RedeliverManyRequest): Promise<RedeliverManyReply> {
    const redelivered = await this.deliveries.redeliverMany(request);
    if (redelivered > 0) this.worker.wake();
    return { redelivered };
  }

  @MessagePattern(ADMIN_DELIVERIES_SUBJECTS.failureCounts)
  failureCounts(@Payload() request: FailureCountsRequest): Promise<FailureCountsReply> {
    return this.deliveries.failureCounts(request.orgs);
  }
}
