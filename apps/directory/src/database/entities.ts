import { DeploymentEntity } from '@app/database';
import { AgentEntity } from '../agents/agent.entity';
import { AdminAuditEntity } from '../audit/admin-audit.entity';
import { ApiKeyEntity } from '../agents/api-key.entity';
import { OutboxEventEntity } from '../events/outbox-event.entity';
import { TrustPolicyEntity } from '../trust/trust-policy.entity';
import { OrgEntity } from '../orgs/org.entity';
import { PersonRoleEntity } from '../orgs/person-role.entity';

/** Every entity of the directory schema, and the deployment row every service shares. */
export const DIRECTORY_ENTITIES: Array<new () => object> = [
  DeploymentEntity,
  AgentEntity,
  ApiKeyEntity,
  TrustPolicyEntity,
  OutboxEventEntity,
  AdminAuditEntity,
  OrgEntity,
  PersonRoleEntity,
];
