import {
  Body,
  Controller,
  Get,
  HttpCode,
  Inject,
  Logger,
  Param,
  Patch,
  Post,
  Query,
  Req,
  UseFilters,
  UseGuards,
  UseInterceptors,
  UsePipes,
} from '@nestjs/common';
import {
  CreateOrgRequest,
  ListOrgsQuery,
  NOTIFIER_SUBJECTS,
  ORG_SUBJECTS,
  OrgFields,
  OrgNameRequest,
  OrgPeopleQuery,
  PERSON_ROLE_SUBJECTS,
  type OrgApprovalsView,
  type OrgPage,
  type OrgPeoplePage,
  type OrgRecord,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { NotifierSealer } from '@app/secrets';
import { LeastRole } from '../admin-roles';
import type { FastifyRequest } from 'fastify';
import { adminPrincipalOf, AdminTokenGuard } from '../sign-in/admin-token.guard';
import { AdminAuditInterceptor, Audited } from '../audit/admin-audit';
import { AdminExceptionFilter, AdminValidationPipe } from '../admin-errors';
import { EdgeConfig } from '../../edge.config';

/** What an audit row says of a change of the org's approvals channel: whether one is set and its host, never the URL. */
function notificationsAudit(result: unknown, body: unknown): Record<string, unknown> | undefined {
  if ((body as OrgFields | undefined)?.notifications?.approvals_slack_url === undefined) return undefined;
  const notifications = (result as OrgRecord).notifications;
  return notifications ? { notifications } : undefined;
}

/**
 * The admin API over orgs (docs/orgs.md): their display names, defaults and quotas, the directory's;
 * and their approvals channel, the notifier's (its URL sealed to the notifier on the way, never
 * returned). Thin: the rules are those services'.
 */
@Controller('admin/orgs')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
@UsePipes(AdminValidationPipe)
@UseInterceptors(AdminAuditInterceptor)
export class AdminOrgsController {
  private readonly logger = new Logger(AdminOrgsController.name);

  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(NotifierSealer) private readonly sealer: NotifierSealer,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
  ) {}

  @Post()
  @HttpCode(201)
  @LeastRole('admin')
  @Audited('org.create', undefined, (result, body) => ({ org: (result as OrgRecord).name, ...notificationsAudit(result, body) }))
  async create(@Body() body: CreateOrgRequest): Promise<OrgRecord> {
    const { notifications, ...fields } = body;
    const sealed = await this.sealedSlackUrl(notifications?.approvals_slack_url);
    // The URL is checked before the org is written, so a refused one leaves nothing behind.
    if (sealed !== undefined) await this.rpc.request(NOTIFIER_SUBJECTS.putOrgApprovals, { org: body.name, sealed_slack_url: sealed, check_only: true });
    const org = await this.rpc.request(ORG_SUBJECTS.create, fields);
    if (sealed === undefined) return this.withNotifications(org);
    return { ...org, notifications: await this.putSlackUrl(org.name, sealed) };
  }

  @Get()
  async list(@Query() query: ListOrgsQuery, @Req() request: FastifyRequest): Promise<OrgPage> {
    const { orgs } = adminPrincipalOf(request);
    const page = await this.rpc.request(ORG_SUBJECTS.list, { ...query, ...(orgs === 'all' ? {} : { only: orgs }) });
    const views = await this.notificationsOf(page.items.map((org) => org.name));
    return { ...page, items: page.items.map((org) => withView(org, views)) };
  }

  @Get(':name')
  async get(@Param() { name }: OrgNameRequest): Promise<OrgRecord> {
    return this.withNotifications(await this.rpc.request(ORG_SUBJECTS.get, { name }));
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
  @Audited('org.update', 'name', notificationsAudit)
  async update(@Param() { name }: OrgNameRequest, @Body() body: OrgFields): Promise<OrgRecord> {
    const { notifications, ...fields } = body;
    const sealed = await this.sealedSlackUrl(notifications?.approvals_slack_url);
    if (sealed === undefined) return this.withNotifications(await this.rpc.request(ORG_SUBJECTS.update, { ...fields, name }));
    // The org must exist (404 otherwise) and the URL pass the notifier's rules before anything is written.
    const current = await this.rpc.request(ORG_SUBJECTS.get, { name });
    await this.rpc.request(NOTIFIER_SUBJECTS.putOrgApprovals, { org: current.name, sealed_slack_url: sealed, check_only: true });
    const org = Object.keys(fields).length > 0 ? await this.rpc.request(ORG_SUBJECTS.update, { ...fields, name }) : current;
    return { ...org, notifications: await this.putSlackUrl(org.name, sealed) };
  }

  /** The URL sealed to the notifier's key (null: clear it); undefined when the body does not name it. */
  private async sealedSlackUrl(url: string | null | undefined): Promise<string | null | undefined> {
    if (url === undefined || url === null) return url;
    return this.sealer.seal(url);
  }

  private async putSlackUrl(org: string, sealed: string | null): Promise<OrgRecord['notifications']> {
    const view = await this.rpc.request(NOTIFIER_SUBJECTS.putOrgApprovals, { org, sealed_slack_url: sealed });
    return { approvals_slack_url: view.approvals_slack_url };
  }

  private async withNotifications(org: OrgRecord): Promise<OrgRecord> {
    return withView(org, await this.notificationsOf([org.name]));
  }

  /** Each org's approvals channel as the notifier holds it; none when it does not answer (the org reads as the directory has it). */
  private async notificationsOf(orgs: string[]): Promise<Map<string, OrgApprovalsView>> {
    if (orgs.length === 0) return new Map();
    try {
      const { items } = await this.rpc.request(NOTIFIER_SUBJECTS.orgApprovals, { orgs });
      return new Map(items.map((item) => [item.org, item]));
    } catch (error) {
      this.logger.warn({ err: error, orgs: orgs.length }, 'org approvals channels not read from the notifier; orgs shown without them');
      return new Map();
    }
  }
}

function withView(org: OrgRecord, views: Map<string, OrgApprovalsView>): OrgRecord {
  const view = views.get(org.name);
  return view ? { ...org, notifications: { approvals_slack_url: view.approvals_slack_url } } : org;
}
