import { IsBoolean, IsIn, IsInt, IsOptional, IsString } from 'class-validator';

/**
 * The notifier makes and keeps the durable pull consumers of internal event consumers: a
 * consumer's NATS credential may read its own durable consumer of the event stream, never create
 * one itself (a consumer it made could push the stream's events onto any subject of the relay).
 */
export const EVENT_CONSUMER_SUBJECTS = {
  /** Makes (or keeps) the caller's durable consumer; addressed to `relay.notifier.v1.event_consumers.<name>.ensure`. */
  ensure: 'relay.notifier.v1.event_consumers.ensure',
} as const;

/** A consumer's name: one subject token and a durable consumer name NATS accepts. */
export const EVENT_CONSUMER_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * The subject a request to one named consumer is sent on: its name is a token of the subject, so
 * a credential allowed that one subject speaks for that consumer alone.
 */
export function eventConsumerEnsureSubject(name: string): string {
  if (!EVENT_CONSUMER_NAME.test(name))
    throw new Error(`An event consumer's name is 1-64 lowercase letters, digits or '_', starting with a letter (got ${JSON.stringify(name)})`);
  return `relay.notifier.v1.event_consumers.${name}.ensure`;
}

/**
 * Request subjects whose service subscribes to a wildcard (the caller's name is a token of it): the
 * handler's pattern, and the subject it is subscribed on.
 */
export const SUBJECTS_ADDRESSED_BY_NAME: Readonly<Record<string, string>> = {
  [EVENT_CONSUMER_SUBJECTS.ensure]: 'relay.notifier.v1.event_consumers.*.ensure',
};

export const EVENT_CONSUMER_STARTS = ['new', 'all', 'sequence', 'time'] as const;
export type EventConsumerStart = (typeof EVENT_CONSUMER_STARTS)[number];

/** The most events a consumer may hold unacknowledged at once (its backpressure bound). */
export const EVENT_CONSUMER_MAX_ACK_PENDING = 10_000;

export class EnsureEventConsumerRequest {
  /** Where a new consumer starts: new events only, every event kept, from a stream sequence, from a time. */
  @IsOptional()
  @IsIn(EVENT_CONSUMER_STARTS)
  start?: EventConsumerStart;

  @IsOptional()
  @IsInt()
  start_sequence?: number;

  /** RFC 3339 instant, for `start: 'time'`. */
  @IsOptional()
  @IsString()
  start_time?: string;

  /** Events of these subjects only (under `relay.events.`, without the deployment prefix); every event when left out. */
  @IsOptional()
  @IsString()
  filter_subject?: string;

  @IsOptional()
  @IsInt()
  max_ack_pending?: number;

  @IsOptional()
  @IsInt()
  ack_wait_ms?: number;

  /** Makes the consumer anew from `start` (an existing one keeps its position otherwise). */
  @IsOptional()
  @IsBoolean()
  reset?: boolean;
}

export interface EnsureEventConsumerReply {
  name: string;
  stream: string;
  /** True when this call made the consumer (new, or `reset`). */
  created: boolean;
  /** Events not yet delivered to it. */
  num_pending: number;
  /** The stream sequence it has been delivered up to. */
  delivered_stream_seq: number;
}

export interface EventConsumersRpc {
  [EVENT_CONSUMER_SUBJECTS.ensure]: { request: EnsureEventConsumerRequest; reply: EnsureEventConsumerReply };
}
