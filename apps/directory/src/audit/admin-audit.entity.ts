import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** One change made through the admin API, and who made it (`admin token` or `console:<session>`). */
@Entity({ name: 'admin_audit' })
export class AdminAuditEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'admin_audit_pkey' })
  id: string;

  @CreateDateColumn({ type: 'timestamptz' })
  at: Date;

  @Column({ type: 'varchar', length: 64 })
  actor: string;

  @Column({ type: 'varchar', length: 64 })
  action: string;

  @Column({ type: 'varchar', length: 512, nullable: true })
  target: string | null;

  @Column({ type: 'jsonb', default: () => "'{}'" })
  detail: Record<string, unknown>;
}
