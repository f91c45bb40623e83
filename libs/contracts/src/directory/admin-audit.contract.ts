import { Type } from 'class-transformer';
import { IsArray, IsInt, IsNotEmpty, IsObject, IsOptional, IsString, Matches, Max, Min } from 'class-validator';
import { ORG_PATTERN } from '../orgs/orgs.contract';

/** The admin audit log, kept by the directory: who changed what through the admin API. */
export const ADMIN_AUDIT_SUBJECTS = {
  record: 'relay.directory.v1.audit.record',
  list: 'relay.directory.v1.audit.list',
  /** The chain bounds' refusals (`handoff.refuse`) of one chain, by its root, newest first. */
  chainRefusals: 'relay.directory.v1.audit.chain_refusals',
} as const;

export const ADMIN_AUDIT_LIMITS = {
  actorChars: 64,
  actorSubChars: 255,
  actorEmailChars: 320,
  actionChars: 64,
  targetChars: 512,
  listDefaultLimit: 50,
  listMaxLimit: 200,
  /** Refusals one chain read carries at most (the newest). */
  chainRefusals: 100,
} as const;

/** An admin audit action: `<area>.<verb>`, e.g. `agent.create`, `tool_prompt.allow`. */
export const ADMIN_AUDIT_ACTION = /^[a-z_]+\.[a-z_]+$/;

export class RecordAdminAuditRequest {
  /** `admin token` or `console:<session>` (a session of the admin token or of a person, named by `actor_sub`). */
  @IsString()
  @IsNotEmpty()
  actor: string;

  /** The person behind a console session signed in through OIDC: their `sub` at the provider. */
  @IsOptional()
  @IsString()
  @IsNotEmpty()
  actor_sub?: string;

  /** That person's email, when the provider gave one. */
  @IsOptional()
  @IsString()
  actor_email?: string;

  /** What was done, e.g. `agent.create`, `key.revoke`, `delivery.redeliver` (ADMIN_AUDIT_ACTION, checked by the directory). */
  @IsString()
  action: string;

  /** What it was done to: a handle, a key prefix, a delivery id, … */
  @IsOptional()
  @IsString()
  target?: string;

  /** A few facts about the change (never a secret). */
  @IsOptional()
  @IsObject()
  detail?: Record<string, unknown>;

  /** The org of what was changed; absent: the relay's. */
  @IsOptional()
  @IsString()
  @Matches(ORG_PATTERN)
  org?: string;
}

export class ListAdminAuditRequest {
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(ADMIN_AUDIT_LIMITS.listMaxLimit)
  limit?: number;

  @IsOptional()
  @IsString()
  @Matches(/^[0-9]{1,19}$/, { message: 'cursor must be the next_cursor of a previous page' })
  cursor?: string;

  /** Only rows of these orgs (a person's scope, set by the edge); absent: every row. */
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  orgs?: string[];
}

export class ListChainRefusalsRequest {
  /** The chain's root: the refusals whose handoff named a parent in its tree. */
  @IsString()
  @IsNotEmpty()
  root_task_id: string;
}

export interface AdminAuditEntry {
  id: string;
  at: string;
  actor: string;
  /** The person (OIDC `sub`, email) behind a console session; null for the admin token and its sessions. */
  actor_sub: string | null;
  actor_email: string | null;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
  /** The org of what was changed; null: the relay's. */
  org: string | null;
}

export interface AdminAuditPage {
  items: AdminAuditEntry[];
  next_cursor: string | null;
}

/** The newest `ADMIN_AUDIT_LIMITS.chainRefusals` refusals of a chain; `truncated` when it has more. */
export interface ChainRefusalsReply {
  items: AdminAuditEntry[];
  truncated: boolean;
}

export interface AdminAuditRpc {
  [ADMIN_AUDIT_SUBJECTS.record]: { request: RecordAdminAuditRequest; reply: AdminAuditEntry };
  [ADMIN_AUDIT_SUBJECTS.list]: { request: ListAdminAuditRequest; reply: AdminAuditPage };
  [ADMIN_AUDIT_SUBJECTS.chainRefusals]: { request: ListChainRefusalsRequest; reply: ChainRefusalsReply };
}
