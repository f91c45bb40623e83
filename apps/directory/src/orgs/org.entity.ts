import { Check, Column, CreateDateColumn, Entity, PrimaryColumn, Unique, UpdateDateColumn } from 'typeorm';
import { ORG_LIMITS, type ChainPolicy, type OrgDefaults, type OrgOrigin } from '@app/contracts';

/** An org: the part of a handle after `@`, as a record with its display name, defaults and quotas. */
@Entity({ name: 'orgs' })
@Check('orgs_name_format', `"name" ~ '^[a-z0-9][a-z0-9.-]{0,126}$'`)
@Check('orgs_display_name_not_blank', `"display_name" IS NULL OR btrim("display_name") <> ''`)
@Check('orgs_origin', `"origin" IN ('admin', 'first_use')`)
@Check('orgs_defaults_object', `jsonb_typeof("defaults") = 'object'`)
@Check('orgs_quota_agents', `"quota_agents" IS NULL OR "quota_agents" >= 0`)
@Check('orgs_quota_open_handoffs', `"quota_open_handoffs" IS NULL OR "quota_open_handoffs" >= 0`)
@Check('orgs_quota_stored_bytes', `"quota_stored_bytes" IS NULL OR "quota_stored_bytes" >= 0`)
@Check('orgs_quota_upstream_in_flight', `"quota_upstream_in_flight" IS NULL OR "quota_upstream_in_flight" >= 1`)
@Check('orgs_chain_object', `jsonb_typeof("chain") = 'object'`)
@Check('orgs_quota_requests_per_minute', `"quota_requests_per_minute" IS NULL OR "quota_requests_per_minute" >= 1`)
@Check('orgs_tenant_format', `"tenant" IS NULL OR ("tenant" ~ '^[a-z0-9][a-z0-9._-]{0,62}$' AND "tenant" NOT IN ('tasks', 'v1'))`)
@Unique('orgs_tenant_key', ['tenant'])
export class OrgEntity {
  @PrimaryColumn({ type: 'varchar', length: ORG_LIMITS.nameChars, primaryKeyConstraintName: 'orgs_pkey' })
  name: string;

  @Column({ type: 'varchar', length: ORG_LIMITS.displayNameChars, nullable: true })
  displayName: string | null;

  /** Checked against the admin API's OrgDefaultsFields before it is written. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  defaults: Partial<OrgDefaults>;

  /** The most agents the org may have registered, disabled ones included; null: no limit of its own. */
  @Column({ type: 'integer', nullable: true })
  quotaAgents: number | null;

  /** Calls per minute across the org's agents; null: no limit of its own. */
  @Column({ type: 'integer', nullable: true })
  quotaRequestsPerMinute: number | null;

  /** Handoffs the org's agents sent that are still open (OPEN_HANDOFF_STATES); null: no limit of its own. */
  @Column({ type: 'integer', nullable: true })
  quotaOpenHandoffs: number | null;

  /** Bytes of messages and artifacts the org's agents wrote into handoffs still stored; null: no limit of its own. */
  @Column({
    type: 'bigint',
    nullable: true,
    transformer: { to: (value: number | null) => value, from: (value: string | null) => (value === null ? null : Number(value)) },
  })
  quotaStoredBytes: number | null;

  /** Deliveries to the org's upstream agents a notifier process attempts at once; null: no limit of its own. */
  @Column({ type: 'integer', nullable: true })
  quotaUpstreamInFlight: number | null;

  /** The org's chain bounds (docs/chains.md), under its agents' trust policies'; checked against CHAIN_POLICY_SCHEMA before it is written. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  chain: ChainPolicy;

  @Column({ type: 'varchar', length: 16 })
  origin: OrgOrigin;

  /** The org's A2A tenant on its agents' cards and requests (docs/orgs.md#an-orgs-own-a2a-address); null: none. */
  @Column({ type: 'varchar', length: ORG_LIMITS.tenantChars, nullable: true })
  tenant: string | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
