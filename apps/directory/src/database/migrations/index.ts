import { CreateDirectory1764470000000 } from './1764470000000-CreateDirectory';
import { CreateAgentEventOutbox1764470100000 } from './1764470100000-CreateAgentEventOutbox';
import { AdminAudit1764560000000 } from './1764560000000-AdminAudit';
import { AgentWebhookTimeout1764560100000 } from './1764560100000-AgentWebhookTimeout';
import { AddAgentInputModes1764900000000 } from './1764900000000-AddAgentInputModes';
import { AdminAuditPerson1765000000000 } from './1765000000000-AdminAuditPerson';
import { AgentTokenSubject1765000100000 } from './1765000100000-AgentTokenSubject';
import { Deployment1765100000000 } from './1765100000000-Deployment';
import { AgentUpstream1765200000000 } from './1765200000000-AgentUpstream';
import { TrustHoldRules1765300000000 } from './1765300000000-TrustHoldRules';
import { TrustToolPromptRules1765440000000 } from './1765440000000-TrustToolPromptRules';
import { TrustChainBounds1765460000000 } from './1765460000000-TrustChainBounds';
import { AgentOwner1765510000000 } from './1765510000000-AgentOwner';
import { ChainRefusalIndex1765523300000 } from './1765523300000-ChainRefusalIndex';
import { Orgs1765536600000 } from './1765536600000-Orgs';
import { PersonRoles1765536700000 } from './1765536700000-PersonRoles';
import { AdminAuditOrg1765536800000 } from './1765536800000-AdminAuditOrg';
import { OrgChainBounds1765541900000 } from './1765541900000-OrgChainBounds';
import { OrgOpenHandoffsQuota1765545300000 } from './1765545300000-OrgOpenHandoffsQuota';
import { PersonRolesByOrg1765549900000 } from './1765549900000-PersonRolesByOrg';
import { OrgTenant1765550000000 } from './1765550000000-OrgTenant';
import { OrgStoredBytesAndUpstreamQuotas1765870000000 } from './1765870000000-OrgStoredBytesAndUpstreamQuotas';

/** Every migration of the directory schema, oldest first. */
export const DIRECTORY_MIGRATIONS: Array<new () => object> = [
  CreateDirectory1764470000000,
  CreateAgentEventOutbox1764470100000,
  AdminAudit1764560000000,
  AgentWebhookTimeout1764560100000,
  AddAgentInputModes1764900000000,
  AdminAuditPerson1765000000000,
  AgentTokenSubject1765000100000,
  Deployment1765100000000,
  AgentUpstream1765200000000,
  TrustHoldRules1765300000000,
  TrustToolPromptRules1765440000000,
  TrustChainBounds1765460000000,
  AgentOwner1765510000000,
  ChainRefusalIndex1765523300000,
  Orgs1765536600000,
  PersonRoles1765536700000,
  AdminAuditOrg1765536800000,
  OrgChainBounds1765541900000,
  OrgOpenHandoffsQuota1765545300000,
  PersonRolesByOrg1765549900000,
  OrgTenant1765550000000,
  OrgStoredBytesAndUpstreamQuotas1765870000000,
];
