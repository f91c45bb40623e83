import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, MoreThan, QueryFailedError, type EntityManager, type FindOptionsWhere } from 'typeorm';
import {
  ORG_LIMITS,
  ORG_PATTERN,
  orgOf,
  RelayError,
  type CreateOrgRequest,
  type ListOrgsRequest,
  type OrgDefaults,
  type OrgFields,
  type OrgPage,
  type OrgQuotasReply,
  type OrgRecord,
  type UpdateOrgRequest,
} from '@app/contracts';
import { OrgQuotaMetrics } from '@app/metrics';
import { DirectoryConfig } from '../directory.config';
import { AgentEventsPublisher } from '../events/agent-events.publisher';
import { OrgEntity } from './org.entity';

function orgNotFound(name: string): RelayError {
  return new RelayError('org_not_found', `No org named ${name}`, { org: name });
}

function tenantTaken(tenant: string): RelayError {
  return new RelayError('tenant_taken', `The tenant ${tenant} is another org's: choose another`, { tenant, field: 'tenant' });
}

/** Runs a write that may give an org a tenant another org holds: that is `tenant_taken`, naming the tenant only. */
async function tenantWrite<T>(tenant: string | null | undefined, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const driverError = error instanceof QueryFailedError ? (error.driverError as { code?: string; constraint?: string }) : undefined;
    if (tenant && driverError?.code === '23505' && driverError.constraint === 'orgs_tenant_key') throw tenantTaken(tenant);
    throw error;
  }
}

function encodeCursor(name: string): string {
  return Buffer.from(name, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!ORG_PATTERN.test(name)) throw new RelayError('invalid_params', 'cursor: not a cursor from a previous page', { field: 'cursor' });
  return name;
}

/** The org's defaults as stored: a trust policy with every list present, or none. */
function storedDefaults(fields: OrgFields['defaults'], current: Partial<OrgDefaults>): Partial<OrgDefaults> {
  if (fields === undefined || fields.trust === undefined) return current;
  if (fields.trust === null) return { ...current, trust: null };
  return {
    ...current,
    trust: {
      allow: [...new Set(fields.trust.allow ?? [])],
      block: [...new Set(fields.trust.block ?? [])],
      hold: fields.trust.hold ?? [],
      tool_prompts: fields.trust.tool_prompts ?? [],
      chain: fields.trust.chain ?? {},
    },
  };
}

/** Orgs as records: their display names, defaults and quotas, and the admission of a new agent into one. */
@Injectable()
export class OrgsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DirectoryConfig) private readonly config: DirectoryConfig,
    @Inject(AgentEventsPublisher) private readonly events: AgentEventsPublisher,
    @Inject(OrgQuotaMetrics) private readonly metrics: OrgQuotaMetrics,
  ) {}

  async create(request: CreateOrgRequest): Promise<OrgRecord> {
    // A name or tenant taken is no error in the log: the insert is skipped and says so.
    const inserted = await this.dataSource
      .getRepository(OrgEntity)
      .createQueryBuilder()
      .insert()
      .values({
        name: request.name,
        displayName: request.display_name ?? null,
        defaults: storedDefaults(request.defaults, {}),
        quotaAgents: request.quotas?.agents ?? null,
        quotaRequestsPerMinute: request.quotas?.requests_per_minute ?? null,
        quotaOpenHandoffs: request.quotas?.open_handoffs ?? null,
        quotaStoredBytes: request.quotas?.stored_bytes ?? null,
        quotaUpstreamInFlight: request.quotas?.upstream_in_flight ?? null,
        chain: request.chain ?? {},
        origin: 'admin',
        tenant: request.tenant ?? null,
      })
      .orIgnore()
      .returning(['name'])
      .execute();
    if ((inserted.raw as unknown[]).length === 0) {
      const taken = await this.dataSource.getRepository(OrgEntity).exists({ where: { name: request.name } });
      if (taken || !request.tenant) throw new RelayError('org_exists', `The org ${request.name} already exists`, { org: request.name });
      throw tenantTaken(request.tenant);
    }
    return this.get(request.name);
  }

  async list(request: ListOrgsRequest): Promise<OrgPage> {
    const limit = request.limit ?? ORG_LIMITS.listDefaultLimit;
    const where: FindOptionsWhere<OrgEntity> = {};
    if (request.cursor) where.name = MoreThan(decodeCursor(request.cursor));
    const only = request.only;
    if (only !== undefined) {
      if (only.length === 0) return { items: [], next_cursor: null };
      const names = request.cursor ? only.filter((name) => name > decodeCursor(request.cursor as string)) : only;
      where.name = In(names);
    }
    const rows = await this.dataSource.getRepository(OrgEntity).find({ where, order: { name: 'ASC' }, take: limit + 1 });
    const items = rows.slice(0, limit);
    const counts = await this.agentCounts(items.map((org) => org.name));
    return {
      items: items.map((org) => this.toRecord(org, counts.get(org.name) ?? 0)),
      next_cursor: rows.length > limit ? encodeCursor(items[items.length - 1].name) : null,
    };
  }

  async get(name: string): Promise<OrgRecord> {
    const org = await this.dataSource.getRepository(OrgEntity).findOne({ where: { name } });
    if (!org) throw orgNotFound(name);
    const counts = await this.agentCounts([name]);
    return this.toRecord(org, counts.get(name) ?? 0);
  }

  async update(request: UpdateOrgRequest): Promise<OrgRecord> {
    await tenantWrite(request.tenant, () =>
      this.dataSource.transaction(async (manager) => {
        const repository = manager.getRepository(OrgEntity);
        const org = await repository.findOne({ where: { name: request.name }, lock: { mode: 'pessimistic_write' } });
        if (!org) throw orgNotFound(request.name);
        if (request.display_name !== undefined) org.displayName = request.display_name;
        org.defaults = storedDefaults(request.defaults, org.defaults);
        if (request.quotas?.agents !== undefined) org.quotaAgents = request.quotas.agents;
        if (request.quotas?.requests_per_minute !== undefined) org.quotaRequestsPerMinute = request.quotas.requests_per_minute;
        if (request.quotas?.open_handoffs !== undefined) org.quotaOpenHandoffs = request.quotas.open_handoffs;
        if (request.quotas?.stored_bytes !== undefined) org.quotaStoredBytes = request.quotas.stored_bytes;
        if (request.quotas?.upstream_in_flight !== undefined) org.quotaUpstreamInFlight = request.quotas.upstream_in_flight;
        if (request.chain !== undefined) org.chain = request.chain ?? {};
        if (request.tenant !== undefined && request.tenant !== org.tenant) {
          // Checked first so that a taken tenant is no error in the log; the unique key decides a race.
          if (request.tenant !== null && (await repository.exists({ where: { tenant: request.tenant } }))) throw tenantTaken(request.tenant);
          org.tenant = request.tenant;
        }
        org.updatedAt = new Date();
        await repository.save(org);
      }),
    );
    // Edges drop the quotas they cached.
    this.events.announceChange({ kind: 'org_updated', handle: `*@${request.name}` });
    return this.get(request.name);
  }

  /** The org's quotas alone, for the edge's hot path (all null for an org with no row). */
  async quotas(name: string): Promise<OrgQuotasReply> {
    const org = await this.dataSource.getRepository(OrgEntity).findOne({
      where: { name },
      select: { quotaAgents: true, quotaRequestsPerMinute: true, quotaOpenHandoffs: true, quotaStoredBytes: true, quotaUpstreamInFlight: true },
    });
    return {
      org: name,
      quotas: {
        agents: org?.quotaAgents ?? null,
        requests_per_minute: org?.quotaRequestsPerMinute ?? null,
        open_handoffs: org?.quotaOpenHandoffs ?? null,
        stored_bytes: org?.quotaStoredBytes ?? null,
        upstream_in_flight: org?.quotaUpstreamInFlight ?? null,
      },
    };
  }

  /**
   * The org a new agent joins, inside the registration's transaction: made with the relay's
   * defaults when it does not exist (unless RELAY_ORGS_EXPLICIT), locked so that two registrations
   * cannot both take the last place of its agents quota. Returns the trust policy the agent starts with.
   */
  async admitNewAgent(manager: EntityManager, handle: string): Promise<OrgDefaults['trust']> {
    const name = orgOf(handle);
    if (!this.config.RELAY_ORGS_EXPLICIT) {
      await manager.query(`INSERT INTO "directory"."orgs" ("name", "origin") VALUES ($1, 'first_use') ON CONFLICT ("name") DO NOTHING`, [name]);
    }
    const org = await manager.getRepository(OrgEntity).findOne({ where: { name }, lock: { mode: 'pessimistic_write' } });
    if (!org) {
      throw new RelayError(
        'org_not_found',
        `The org ${name} does not exist: this relay registers agents only in orgs an admin created (RELAY_ORGS_EXPLICIT); create it first (POST /admin/orgs)`,
        { org: name, field: 'handle' },
      );
    }
    if (org.quotaAgents !== null) {
      const registered = (await this.agentCounts([name], manager)).get(name) ?? 0;
      if (registered >= org.quotaAgents) {
        this.metrics.rejected(name, 'agents');
        throw new RelayError('org_quota_exceeded', `The org ${name} is at its quota of ${org.quotaAgents} agents`, {
          org: name,
          quota: 'agents',
          limit: org.quotaAgents,
        });
      }
    }
    return org.defaults.trust ?? null;
  }

  private async agentCounts(names: string[], manager: EntityManager = this.dataSource.manager): Promise<Map<string, number>> {
    if (names.length === 0) return new Map();
    const rows: Array<{ org: string; agents: string }> = await manager.query(
      `SELECT split_part("handle", '@', 2) AS "org", count(*) AS "agents" FROM "directory"."agents"
       WHERE split_part("handle", '@', 2) = ANY($1::text[]) GROUP BY 1`,
      [names],
    );
    return new Map(rows.map((row) => [row.org, Number(row.agents)]));
  }

  private toRecord(org: OrgEntity, agents: number): OrgRecord {
    return {
      name: org.name,
      display_name: org.displayName,
      defaults: { trust: org.defaults.trust ?? null },
      quotas: {
        agents: org.quotaAgents,
        requests_per_minute: org.quotaRequestsPerMinute,
        open_handoffs: org.quotaOpenHandoffs,
        stored_bytes: org.quotaStoredBytes,
        upstream_in_flight: org.quotaUpstreamInFlight,
      },
      chain: org.chain,
      origin: org.origin,
      tenant: org.tenant,
      agents,
      created_at: org.createdAt.toISOString(),
      updated_at: org.updatedAt.toISOString(),
    };
  }
}
