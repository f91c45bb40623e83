import { DeploymentEntity } from '@app/database';
import { OrgApprovalChannelEntity } from '../approvals/org-approval-channel.entity';
import { DeliveryAttemptEntity } from '../deliveries/delivery-attempt.entity';
import { DeliveryEntity } from '../deliveries/delivery.entity';
import { SlackSlotEntity } from '../deliveries/slack-slot.entity';
import { WebhookSecretEntity } from '../secrets/webhook-secret.entity';
import { AgentTargetEntity } from '../targets/agent-target.entity';
import { PushTargetEntity } from '../targets/push-target.entity';
import { UpstreamCredentialEntity } from '../upstream/identity/upstream-credential.entity';
import { UpstreamTaskEntity } from '../upstream/follow/upstream-task.entity';
import { UpstreamAgentEntity, UpstreamCallEntity, UpstreamRegistrationEntity, UpstreamTlsEntity } from '../upstream/cards/upstream-agent.entity';

/** Every entity of the notifier schema, and the deployment row every service shares. */
export const NOTIFIER_ENTITIES: Array<new () => object> = [
  DeploymentEntity,
  AgentTargetEntity,
  PushTargetEntity,
  WebhookSecretEntity,
  DeliveryEntity,
  DeliveryAttemptEntity,
  SlackSlotEntity,
  UpstreamCredentialEntity,
  UpstreamTaskEntity,
  UpstreamAgentEntity,
  UpstreamTlsEntity,
  UpstreamCallEntity,
  UpstreamRegistrationEntity,
  OrgApprovalChannelEntity,
];
