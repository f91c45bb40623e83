import type { NatsServers } from '@app/config';
/** The outbox table, written by the tasks service in the same transaction as each change. */
export const OUTBOX_TABLE = '"tasks"."outbox_events"';

/**
 * The one SQL predicate that says an outbox row is published (the relay had JetStream's
 * acknowledgement and marked it). The relay's reads negate it; anything that keeps or drops rows
 * by whether they are published uses it as it is.
 */
export const OUTBOX_PUBLISHED = 'published_at IS NOT NULL';

export interface OutboxRelayOptions {
  natsUrl: string | NatsServers;
  subjectPrefix: string;
  /** RELAY_PUBLIC_URL: the CloudEvents `source` of the events, and the base of their `dataschema`. */
  publicUrl: string;
  databaseUrl: string;
  /** Rows read per round. */
  batchSize: number;
  /** Publishes of a round awaiting JetStream's acknowledgement at once (one per task at a time). */
  publishConcurrency: number;
  /**
   * How often the relay sweeps the outbox for events their writer did not publish (it died, or the
   * publish failed); also after a round that left nothing behind.
   */
  pollIntervalMs: number;
  /**
   * How old an unpublished event must be before the sweep publishes it: younger ones are their
   * writer's to publish. Well within the stream's duplicate window, so that an event both publish
   * is stored once.
   */
  settleMs: number;
  /** How long published events wait to be marked so, together, in one UPDATE. */
  markDelayMs: number;
  /** First delay after a failed round, doubled up to `maxBackoffMs`. */
  minBackoffMs: number;
  maxBackoffMs: number;
  publishTimeoutMs: number;
}

export const OUTBOX_RELAY_OPTIONS = Symbol('OUTBOX_RELAY_OPTIONS');

export const DEFAULT_OUTBOX_RELAY_OPTIONS = {
  batchSize: 500,
  publishConcurrency: 128,
  pollIntervalMs: 1000,
  settleMs: 2000,
  markDelayMs: 200,
  minBackoffMs: 100,
  maxBackoffMs: 10_000,
  publishTimeoutMs: 5000,
} as const;
