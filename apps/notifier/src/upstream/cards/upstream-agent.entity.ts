import { Check, Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';
import type { UpstreamCallMethod, UpstreamCallOutcome, UpstreamCardSnapshot, UpstreamPendingChange } from '@app/contracts';

/** What the notifier knows of one upstream agent: its accepted card, a card change waiting for review, its health. */
@Entity({ name: 'upstream_agents' })
@Check('upstream_agents_pending', `("pending" IS NULL) = ("pending_card" IS NULL)`)
export class UpstreamAgentEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'upstream_agents_pkey' })
  handle: string;

  /** The card deliveries go by (null: not read since the relay keeps cards; the directory's interface is the baseline). */
  @Column({ type: 'jsonb', nullable: true })
  accepted: UpstreamCardSnapshot | null;

  /** The changes a refresh found that wait for an operator, and the card they come from. */
  @Column({ type: 'jsonb', nullable: true })
  pending: UpstreamPendingChange | null;

  @Column({ type: 'jsonb', nullable: true })
  pendingCard: UpstreamCardSnapshot | null;

  /** SHA-256 of the reviewed fields of the last change an operator rejected: the same change is not proposed again. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  rejectedDigest: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastRefreshAt: Date | null;

  @Column({ type: 'text', nullable: true })
  lastRefreshError: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastSuccessAt: Date | null;

  @Column({ type: 'timestamptz', nullable: true })
  lastFailureAt: Date | null;

  @Column({ type: 'varchar', length: 32, nullable: true })
  lastFailureMethod: UpstreamCallMethod | null;

  @Column({ type: 'text', nullable: true })
  lastFailureReason: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/** The mTLS client identity the relay presents to one upstream agent. */
@Entity({ name: 'upstream_tls' })
export class UpstreamTlsEntity {
  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'upstream_tls_pkey' })
  handle: string;

  /** PEM, the chain after the certificate. */
  @Column({ type: 'text' })
  clientCert: string;

  /** The PEM private key, sealed (`v1:<key id>:…`) under RELAY_SECRET_KEYS; never returned. */
  @Column({ type: 'text' })
  clientKey: string;

  /** PEM CAs the server's certificate is checked against instead of the system's. */
  @Column({ type: 'text', nullable: true })
  ca: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}

/** One HTTP request the relay made to an upstream agent's server for a relay task (the admin task timeline shows them). */
@Entity({ name: 'upstream_calls' })
@Index('upstream_calls_task_idx', ['taskId', 'id'])
@Index('upstream_calls_at_idx', ['at'])
export class UpstreamCallEntity {
  /** bigserial: a bigint, read as a string. */
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'upstream_calls_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 255 })
  taskId: string;

  @Column({ type: 'varchar', length: 255 })
  handle: string;

  @Column({ type: 'varchar', length: 32 })
  method: UpstreamCallMethod;

  @Column({ type: 'varchar', length: 32 })
  outcome: UpstreamCallOutcome;

  @Column({ type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ type: 'integer' })
  durationMs: number;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  @Column({ type: 'timestamptz', default: () => 'now()' })
  at: Date;
}

/**
 * An upstream agent's registration between reading its card and the directory creating the agent:
 * the checked credential and client identity (their secrets sealed) and the card, made the
 * agent's only once the directory holds the handle (upstream-registrations.service.ts).
 */
@Entity({ name: 'upstream_registrations' })
@Check('upstream_registrations_credential', `("credential" IS NULL) = ("secret" IS NULL)`)
@Check('upstream_registrations_tls', `("tls" IS NULL) = ("client_key" IS NULL)`)
export class UpstreamRegistrationEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'upstream_registrations_pkey' })
  id: string;

  @Column({ type: 'varchar', length: 255 })
  handle: string;

  /** `{scheme, header_name, oauth2}` of the credential, or null for none; its secret is `secret`, sealed. */
  @Column({ type: 'jsonb', nullable: true })
  credential: Record<string, unknown> | null;

  @Column({ type: 'text', nullable: true })
  secret: string | null;

  /** `{client_cert, ca}` of the client identity, or null for none; its key is `clientKey`, sealed. */
  @Column({ type: 'jsonb', nullable: true })
  tls: Record<string, unknown> | null;

  @Column({ type: 'text', nullable: true })
  clientKey: string | null;

  @Column({ type: 'jsonb' })
  accepted: UpstreamCardSnapshot;

  @Index('upstream_registrations_created_idx')
  @Column({ type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
