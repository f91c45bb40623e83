import { Column, Entity, PrimaryColumn } from 'typeorm';

/** An org's approvals Slack channel: where its held handoffs and tool prompts are announced. */
@Entity({ name: 'org_approval_channels' })
export class OrgApprovalChannelEntity {
  @PrimaryColumn({ type: 'varchar', length: 127, primaryKeyConstraintName: 'org_approval_channels_pkey' })
  org: string;

  /** The Slack incoming-webhook URL, sealed (`v1:<key id>:…`, RELAY_SECRET_KEYS): it is its own credential. */
  @Column({ type: 'text' })
  slackUrl: string;

  /** The URL's host, shown to admins in its place. */
  @Column({ type: 'varchar', length: 255 })
  slackHost: string;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
