import {
  jetstream,
  jetstreamManager,
  JetStreamApiCodes,
  JetStreamApiError,
  RetentionPolicy,
  StorageType,
  DiscardPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type PubAck,
  type StreamConfig,
  type StreamInfo,
} from '@nats-io/jetstream';
import { connect, headers as natsHeaders, nanos, type NatsConnection } from '@nats-io/transport-node';
import { prefixedSubject } from '@app/contracts';
import { currentRequestId, REQUEST_ID_HEADER } from '@app/logging';
import { TRACEPARENT_HEADER } from '@app/tracing';

/** Every relay event subject (task and agent events) lives under this root. */
export const RELAY_EVENTS_SUBJECT_ROOT = 'relay.events';

/** How long JetStream remembers a `Nats-Msg-Id` to drop a re-published duplicate. */
export const EVENT_DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

/** How long the event stream keeps events. */
export const EVENT_STREAM_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The name of the JetStream stream holding the relay's events under a subject prefix. Each prefix
 * (deployment or test run) gets a stream of its own, so runs never share one.
 */
export function eventStreamName(subjectPrefix: string): string {
  const suffix = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
  return suffix ? `RELAY_EVENTS_${suffix}` : 'RELAY_EVENTS';
}

/** The subjects the event stream captures: `<prefix>.relay.events.>`. */
export function eventStreamSubjects(subjectPrefix: string): string[] {
  return [prefixedSubject(subjectPrefix, `${RELAY_EVENTS_SUBJECT_ROOT}.>`)];
}

/** A NATS connection with its JetStream client and manager. */
export interface JetStreamContext {
  connection: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
}

/** Opens a dedicated NATS connection for JetStream work (publishing or consuming events). */
export async function openJetStream(options: { url: string; name: string }): Promise<JetStreamContext> {
  const connection = await connect({ servers: options.url, name: options.name, maxReconnectAttempts: -1, noAsyncTraces: true });
  try {
    const jsm = await jetstreamManager(connection);
    return { connection, js: jetstream(connection), jsm };
  } catch (error) {
    await connection.close();
    throw error;
  }
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/**
 * Returns the stream's info, creating it with `config` when it does not exist. Two processes
 * creating it at once is fine: the loser reads the winner's stream.
 */
export async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<StreamInfo> {
  try {
    return await jsm.streams.info(config.name);
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  try {
    return await jsm.streams.add(config);
  } catch (error) {
    try {
      return await jsm.streams.info(config.name);
    } catch {
      throw error;
    }
  }
}

/** Ensures the file-backed event stream of a subject prefix exists. */
export function ensureEventStream(jsm: JetStreamManager, subjectPrefix: string): Promise<StreamInfo> {
  return ensureStream(jsm, {
    name: eventStreamName(subjectPrefix),
    subjects: eventStreamSubjects(subjectPrefix),
    storage: StorageType.File,
    retention: RetentionPolicy.Limits,
    discard: DiscardPolicy.Old,
    max_age: nanos(EVENT_STREAM_MAX_AGE_MS),
    duplicate_window: nanos(EVENT_DUPLICATE_WINDOW_MS),
  });
}

/** Deletes the event stream of a subject prefix (tests clean up their own stream). */
export async function deleteEventStream(jsm: JetStreamManager, subjectPrefix: string): Promise<boolean> {
  try {
    return await jsm.streams.delete(eventStreamName(subjectPrefix));
  } catch (error) {
    if (isStreamNotFound(error)) return false;
    throw error;
  }
}

/**
 * Publishes a JSON payload to JetStream with `Nats-Msg-Id` = `msgId`, so that a re-publish of the
 * same event inside the duplicate window is dropped by the stream (`PubAck.duplicate` is then true).
 * `subject` is the full (already prefixed) subject. `traceParent`, when given, is sent as the
 * message's `traceparent`, so that its consumers can link their work to the request that caused it.
 */
export function publishWithMsgId(
  js: JetStreamClient,
  subject: string,
  payload: unknown,
  msgId: string,
  timeoutMs = 5000,
  traceParent?: string | null,
  extraHeaders: Record<string, string> = {},
): Promise<PubAck> {
  const headers = natsHeaders();
  for (const [name, value] of Object.entries(extraHeaders)) headers.set(name, value);
  const requestId = currentRequestId();
  if (requestId) headers.set(REQUEST_ID_HEADER, requestId);
  if (traceParent) headers.set(TRACEPARENT_HEADER, traceParent);
  return js.publish(subject, JSON.stringify(payload), { msgID: msgId, headers, timeout: timeoutMs });
}
