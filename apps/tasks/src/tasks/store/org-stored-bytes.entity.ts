import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { ORG_LIMITS } from '@app/contracts';

/**
 * Part of the bytes an org's agents keep stored in handoffs (docs/orgs.md#quotas): an org's total
 * is the sum of its shards. A write adds to the shard of its task, so writes of one org to
 * different tasks seldom wait on one row; a retention delete takes from shard 0. A shard alone
 * means nothing and may be negative.
 */
@Entity({ name: 'org_stored_bytes' })
@Check('org_stored_bytes_shard_range', `"shard" BETWEEN 0 AND 15`)
export class OrgStoredBytesEntity {
  @PrimaryColumn({ type: 'varchar', length: ORG_LIMITS.nameChars, primaryKeyConstraintName: 'org_stored_bytes_pkey' })
  org: string;

  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'org_stored_bytes_pkey' })
  shard: number;

  @Column({ type: 'bigint', default: 0 })
  bytes: string;
}
