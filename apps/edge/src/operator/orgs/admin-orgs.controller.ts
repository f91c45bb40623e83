import { Body, Controller, Get, HttpCode, Inject, Param, Patch, Post, Query, Req, UseFilters, UseGuards, UseInterceptors, UsePipes } from '@nestjs/common';
import {
  CreateOrgRequest,
  ListOrgsQuery,
  ORG_SUBJECTS,
  OrgFields,
  OrgNameRequest,
  OrgPeopleQuery,
  PERSON_ROLE_SUBJECTS,
  type OrgPage,
  type OrgPeoplePage,
  type OrgRecord,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { LeastRole } from '../admin-roles';
import type { FastifyRequest } from 'fastify';
import { adminPrincipalOf, AdminTokenGuard } from '../sign-in/admin-token.guard';
import { AdminAuditInterceptor, Audited } from '../audit/admin-audit';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { EdgeConfig } from '../../edge.config';

/** The admin API over orgs (docs/orgs.md): their display names, defaults and quotas. Thin: the rules are the directory's. */
@Controller('admin/orgs')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
@UseInterceptors(AdminAuditInterceptor)
export class AdminOrgsController {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  @Post()
  @HttpCode(201)
  @LeastRole('admin')
  @Audited('org.create', undefined, (result) => ({ org: (result as OrgRecord).name }))
  create(@Body() body: CreateOrgRequest): Promise<OrgRecord> {
    return this.rpc.request(ORG_SUBJECTS.create, body);
  }

  @Get()
  list(@Query() query: ListOrgsQuery, @Req() request: FastifyRequest): Promise<OrgPage> {
    const { orgs } = adminPrincipalOf(request);
    return this.rpc.request(ORG_SUBJECTS.list, { ...query, ...(orgs === 'all' ? {} : { only: orgs }) });
  }

  @Get(':name')
  get(@Param() { name }: OrgNameRequest): Promise<OrgRecord> {
    return this.rpc.request(ORG_SUBJECTS.get, { name });
  }

  /** `GET /admin/orgs/{name}/people`: the people given a role in the org through `PUT /admin/people/{sub}/roles`, by subject. */
  @Get(':name/people')
  async people(@Param() { name }: OrgNameRequest, @Query() query: OrgPeopleQuery): Promise<OrgPeoplePage> {
    const issuer = this.config.RELAY_CONSOLE_OIDC_ISSUER;
    if (issuer === undefined) {
      // No provider, so no one can have been given a role; the org must still exist.
      await this.rpc.request(ORG_SUBJECTS.get, { name });
      return { org: name, issuer: null, items: [], next_cursor: null };
    }
    return this.rpc.request(PERSON_ROLE_SUBJECTS.listOfOrg, { ...query, org: name, issuer });
  }

  @Patch(':name')
  @LeastRole('admin')
  @Audited('org.update', 'name')
  update(@Param() { name }: OrgNameRequest, @Body() body: OrgFields): Promise<OrgRecord> {
    return this.rpc.request(ORG_SUBJECTS.update, { ...body, name });
  }
}
