import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  ADMIN_AUDIT_ACTION,
  ADMIN_AUDIT_LIMITS,
  RelayError,
  type AdminAuditEntry,
  type AdminAuditPage,
  type ChainRefusalsReply,
  type ListChainRefusalsRequest,
  type ListAdminAuditRequest,
  type RecordAdminAuditRequest,
} from '@app/contracts';
import { AdminAuditEntity } from './admin-audit.entity';

function toEntry(row: AdminAuditEntity): AdminAuditEntry {
  return {
    id: String(row.id),
    at: row.at.toISOString(),
    actor: row.actor,
    actor_sub: row.actor_sub,
    actor_email: row.actor_email,
    action: row.action,
    target: row.target,
    detail: row.detail,
    org: row.org,
  };
}

/** The admin audit log: appended to by the edge after each admin change, read newest first. */
@Injectable()
export class AdminAuditService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One row; the names are cut to their columns (a provider's claims have no bound), so that a change is never left unaudited for a long name. */
  async record(request: RecordAdminAuditRequest): Promise<AdminAuditEntry> {
    if (!ADMIN_AUDIT_ACTION.test(request.action) || request.action.length > ADMIN_AUDIT_LIMITS.actionChars) {
      throw new RelayError('invalid_params', `action '${request.action.slice(0, 64)}' is not an audit action (<area>.<verb>)`, { field: 'action' });
    }
    const repository = this.dataSource.getRepository(AdminAuditEntity);
    const saved = await repository.save(
      repository.create({
        actor: request.actor.slice(0, ADMIN_AUDIT_LIMITS.actorChars),
        actor_sub: request.actor_sub?.slice(0, ADMIN_AUDIT_LIMITS.actorSubChars) ?? null,
        actor_email: request.actor_email && request.actor_email.length <= ADMIN_AUDIT_LIMITS.actorEmailChars ? request.actor_email : null,
        action: request.action,
        target: request.target?.slice(0, ADMIN_AUDIT_LIMITS.targetChars) ?? null,
        detail: request.detail ?? {},
        org: request.org ?? null,
      }),
    );
    return toEntry(await repository.findOneByOrFail({ id: saved.id }));
  }

  /** The newest refusals (`handoff.refuse`) of the chain with root `root_task_id`: those whose handoff named a parent in its tree. */
  async chainRefusals(request: ListChainRefusalsRequest): Promise<ChainRefusalsReply> {
    const limit = ADMIN_AUDIT_LIMITS.chainRefusals;
    const rows = await this.dataSource
      .getRepository(AdminAuditEntity)
      .createQueryBuilder('audit')
      .where(`audit.action = 'handoff.refuse'`)
      .andWhere(`audit.detail->>'root_task_id' = :root`, { root: request.root_task_id })
      .orderBy('audit.id', 'DESC')
      .limit(limit + 1)
      .getMany();
    return { items: rows.slice(0, limit).map(toEntry), truncated: rows.length > limit };
  }

  async list(request: ListAdminAuditRequest): Promise<AdminAuditPage> {
    const limit = request.limit ?? ADMIN_AUDIT_LIMITS.listDefaultLimit;
    const query = this.dataSource
      .getRepository(AdminAuditEntity)
      .createQueryBuilder('audit')
      .orderBy('audit.id', 'DESC')
      .limit(limit + 1);
    if (request.cursor) query.andWhere('audit.id < :cursor', { cursor: request.cursor });
    if (request.orgs !== undefined) query.andWhere('audit.org = ANY(:orgs::text[])', { orgs: request.orgs });
    const rows = await query.getMany();
    const items = rows.slice(0, limit).map(toEntry);
    return { items, next_cursor: rows.length > limit ? items[items.length - 1].id : null };
  }
}
