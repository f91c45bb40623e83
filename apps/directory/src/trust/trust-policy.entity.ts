import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A recipient's admission policy: `allow` and `block` lists of handles or `*@org` patterns. */
@Entity({ name: 'trust_policies' })
export class TrustPolicyEntity {
  @PrimaryColumn({ type: 'uuid' })
  agentId: string;

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  allow: string[];

  @Column({ type: 'text', array: true, default: () => "'{}'" })
  block: string[];

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
