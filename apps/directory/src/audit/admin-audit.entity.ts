import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/** One change made through the admin API, and who made it (`admin token` or `console:<session>`, and the person of an OIDC session). */
@Entity({ name: 'admin_audit' })
// The chain bounds' refusals by their chain's root: an expression index, made by its migration.
@Index('admin_audit_chain_refusal_idx', { synchronize: false })
@Index('admin_audit_org', ['org', 'id'])
export class AdminAuditEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'admin_audit_pkey' })
  id: string;

  @CreateDateColumn({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'varchar', length: 64 })
  actor: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  actor_sub: string | null;

  @Column({ type: 'varchar', length: 320, nullable: true })
  actor_email: string | null;

  @Column({ type: 'varchar', length: 64 })
  action: string;

  @Column({ type: 'varchar', length: 512, nullable: true })
  target: string | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  detail: Record<string, unknown>;

  /** The org of what was changed (docs/orgs.md#scoped-roles); null: the relay's (sign-ins, bulk changes). */
  @Column({ type: 'varchar', length: 127, nullable: true })
  org: string | null;
}
