import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  ADMIN_AUDIT_SUBJECTS,
  ListAdminAuditRequest,
  ListChainRefusalsRequest,
  type ChainRefusalsReply,
  RecordAdminAuditRequest,
  type AdminAuditEntry,
  type AdminAuditPage,
  AdmitRequest,
  AuthenticateRequest,
  AuthenticateTokenRequest,
  PutTokenSubjectRequest,
  type TokenSubject,
  CreateAgentCommand,
  DIRECTORY_SUBJECTS,
  HandleRequest,
  ListAgentsRequest,
  PutTrustRequest,
  RevokeKeyRequest,
  UpdateAgentRequest,
  PutAgentUpstreamRequest,
  AcceptAgentUpstreamRequest,
  type AdmitReply,
  type AgentIdentity,
  type AgentPage,
  type AgentProfile,
  type AgentRecord,
  type ApiKeyInfo,
  type ApiKeyList,
  type CreateAgentReply,
  type CreateKeyReply,
  type TrustPolicy,
  CreateOrgRequest,
  ListOrgsRequest,
  ORG_SUBJECTS,
  OrgNameRequest,
  UpdateOrgRequest,
  type OrgPage,
  type OrgRecord,
  type OrgQuotasReply,
  PERSON_ROLE_SUBJECTS,
  PersonRequest,
  ListOrgPeopleRequest,
  type OrgPeoplePage,
  PutPersonRolesRequest,
  type PersonRoles,
} from '@app/contracts';
import { OrgsService } from './orgs/orgs.service';
import { PersonRolesService } from './orgs/person-roles.service';
import { AgentsService } from './agents/agents.service';
import { AdminAuditService } from './audit/admin-audit.service';
import { TrustService } from './trust/trust.service';

/** The directory's NATS subjects; thin over the services. */
@Controller()
export class DirectoryController {
  constructor(
    @Inject(AgentsService) private readonly agents: AgentsService,
    @Inject(TrustService) private readonly trust: TrustService,
    @Inject(AdminAuditService) private readonly audit: AdminAuditService,
    @Inject(OrgsService) private readonly orgs: OrgsService,
    @Inject(PersonRolesService) private readonly personRoles: PersonRolesService,
  ) {}

  @MessagePattern(PERSON_ROLE_SUBJECTS.get)
  getPersonRoles(@Payload() request: PersonRequest): Promise<PersonRoles> {
    return this.personRoles.get(request);
  }

  @MessagePattern(PERSON_ROLE_SUBJECTS.put)
  putPersonRoles(@Payload() request: PutPersonRolesRequest): Promise<PersonRoles> {
    return this.personRoles.put(request);
  }

  @MessagePattern(PERSON_ROLE_SUBJECTS.listOfOrg)
  listOrgPeople(@Payload() request: ListOrgPeopleRequest): Promise<OrgPeoplePage> {
    return this.personRoles.listOfOrg(request);
  }

  @MessagePattern(ORG_SUBJECTS.create)
  createOrg(@Payload() request: CreateOrgRequest): Promise<OrgRecord> {
    return this.orgs.create(request);
  }

  @MessagePattern(ORG_SUBJECTS.list)
  listOrgs(@Payload() request: ListOrgsRequest): Promise<OrgPage> {
    return this.orgs.list(request);
  }

  @MessagePattern(ORG_SUBJECTS.get)
  getOrg(@Payload() request: OrgNameRequest): Promise<OrgRecord> {
    return this.orgs.get(request.name);
  }

  @MessagePattern(ORG_SUBJECTS.quotas)
  orgQuotas(@Payload() request: OrgNameRequest): Promise<OrgQuotasReply> {
    return this.orgs.quotas(request.name);
  }

  @MessagePattern(ORG_SUBJECTS.update)
  updateOrg(@Payload() request: UpdateOrgRequest): Promise<OrgRecord> {
    return this.orgs.update(request);
  }

  @MessagePattern(ADMIN_AUDIT_SUBJECTS.record)
  recordAudit(@Payload() request: RecordAdminAuditRequest): Promise<AdminAuditEntry> {
    return this.audit.record(request);
  }

  @MessagePattern(ADMIN_AUDIT_SUBJECTS.list)
  listAudit(@Payload() request: ListAdminAuditRequest): Promise<AdminAuditPage> {
    return this.audit.list(request);
  }

  @MessagePattern(ADMIN_AUDIT_SUBJECTS.chainRefusals)
  chainRefusals(@Payload() request: ListChainRefusalsRequest): Promise<ChainRefusalsReply> {
    return this.audit.chainRefusals(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.authenticate)
  authenticate(@Payload() request: AuthenticateRequest): Promise<AgentIdentity> {
    return this.agents.authenticate(request.api_key);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.authenticateToken)
  authenticateToken(@Payload() request: AuthenticateTokenRequest): Promise<AgentIdentity> {
    return this.agents.authenticateToken(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.putTokenSubject)
  putTokenSubject(@Payload() request: PutTokenSubjectRequest): Promise<TokenSubject> {
    return this.agents.putTokenSubject(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.admit)
  admit(@Payload() request: AdmitRequest): Promise<AdmitReply> {
    return this.trust.admit(request.sender, request.recipient);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.getProfile)
  profile(@Payload() request: HandleRequest): Promise<AgentProfile> {
    return this.agents.profile(request.handle);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.createAgent)
  createAgent(@Payload() request: CreateAgentCommand): Promise<CreateAgentReply> {
    return this.agents.create(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.listAgents)
  listAgents(@Payload() request: ListAgentsRequest): Promise<AgentPage> {
    return this.agents.list(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.getAgent)
  getAgent(@Payload() request: HandleRequest): Promise<AgentRecord> {
    return this.agents.get(request.handle);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.updateAgent)
  updateAgent(@Payload() request: UpdateAgentRequest): Promise<AgentRecord> {
    return this.agents.update(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.putUpstream)
  putUpstream(@Payload() request: PutAgentUpstreamRequest): Promise<AgentRecord> {
    return this.agents.putUpstream(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.acceptUpstream)
  acceptUpstream(@Payload() request: AcceptAgentUpstreamRequest): Promise<AgentRecord> {
    return this.agents.acceptUpstream(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.disableAgent)
  disableAgent(@Payload() request: HandleRequest): Promise<AgentRecord> {
    return this.agents.disable(request.handle);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.createKey)
  createKey(@Payload() request: HandleRequest): Promise<CreateKeyReply> {
    return this.agents.createKey(request.handle);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.listKeys)
  listKeys(@Payload() request: HandleRequest): Promise<ApiKeyList> {
    return this.agents.listKeys(request.handle);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.revokeKey)
  revokeKey(@Payload() request: RevokeKeyRequest): Promise<ApiKeyInfo> {
    return this.agents.revokeKey(request.handle, request.prefix);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.putTrust)
  putTrust(@Payload() request: PutTrustRequest): Promise<TrustPolicy> {
    return this.trust.put(request);
  }

  @MessagePattern(DIRECTORY_SUBJECTS.getTrust)
  getTrust(@Payload() request: HandleRequest): Promise<TrustPolicy> {
    return this.trust.get(request.handle);
  }
}
