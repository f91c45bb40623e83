/** Channel the outbox relay LISTENs on; a writer may `pg_notify` it in its transaction to wake the relay at commit. */
export const OUTBOX_NOTIFY_CHANNEL = 'relay_outbox';

/** The outbox table, written by the tasks service in the same transaction as each change. */
export const OUTBOX_TABLE = '"tasks"."outbox_events"';

export interface OutboxRelayOptions {
  natsUrl: string;
  subjectPrefix: string;
  databaseUrl: string;
  /** Rows claimed per round. */
  batchSize: number;
  /** Poll interval while idle (a safety net: a NOTIFY on the channel wakes the relay at each commit). */
  idlePollIntervalMs: number;
  /** How long published events wait to be marked so, together, in one UPDATE. */
  markDelayMs: number;
  /** First delay after a failed round, doubled up to `maxBackoffMs`. */
  minBackoffMs: number;
  maxBackoffMs: number;
  publishTimeoutMs: number;
}

export const OUTBOX_RELAY_OPTIONS = Symbol('OUTBOX_RELAY_OPTIONS');

export const DEFAULT_OUTBOX_RELAY_OPTIONS = {
  batchSize: 100,
  idlePollIntervalMs: 5000,
  markDelayMs: 200,
  minBackoffMs: 100,
  maxBackoffMs: 10_000,
  publishTimeoutMs: 5000,
} as const;
