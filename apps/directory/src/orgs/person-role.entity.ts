import { Check, Column, Entity, Index, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { AdminRole } from '@app/contracts';

/** A role an admin gave a person through the admin API: in one org, or relay-wide (`org` = `*`). */
@Entity({ name: 'person_roles' })
@Index('person_roles_org_idx', ['issuer', 'org', 'subject'])
@Check('person_roles_org', `"org" = '*' OR "org" ~ '^[a-z0-9][a-z0-9.-]{0,126}$'`)
@Check('person_roles_role', `"role" IN ('auditor', 'viewer', 'approver', 'operator', 'admin')`)
export class PersonRoleEntity {
  @PrimaryColumn({ type: 'varchar', length: 512, primaryKeyConstraintName: 'person_roles_pkey' })
  issuer: string;

  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'person_roles_pkey' })
  subject: string;

  /** The org, or `*` for a relay-wide role. */
  @PrimaryColumn({ type: 'varchar', length: 127, primaryKeyConstraintName: 'person_roles_pkey' })
  org: string;

  @Column({ type: 'varchar', length: 16 })
  role: AdminRole;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
