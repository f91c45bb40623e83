import { Logger, type LoggerService } from '@nestjs/common';
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
import type { NatsServers } from '@app/config';
import { prefixedSubject } from '@app/contracts';
import { currentRequestId, REQUEST_ID_HEADER } from '@app/logging';
import { TRACEPARENT_HEADER } from '@app/tracing';
import { natsConnectOptions } from './nats-connection';
import { prefixScope } from './stream-names';

/** Every relay event subject (task and agent events) lives under this root. */
export const RELAY_EVENTS_SUBJECT_ROOT = 'relay.events';

/** How long JetStream remembers a `Nats-Msg-Id` to drop a re-published duplicate. */
export const EVENT_DUPLICATE_WINDOW_MS = 10 * 60 * 1000;

/** How long the event stream keeps events. */
export const EVENT_STREAM_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

/** The event stream's size when RELAY_EVENT_STREAM_MAX_BYTES is not set: past it the oldest events go. */
export const DEFAULT_EVENT_STREAM_MAX_BYTES = 1024 * 1024 * 1024;

/**
 * The name of the JetStream stream holding the relay's events under a subject prefix. Each prefix
 * (deployment or test run) gets a stream of its own, so runs never share one.
 */
export function eventStreamName(subjectPrefix: string): string {
  const suffix = prefixScope(subjectPrefix);
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

/** Opens a dedicated NATS connection for JetStream work (publishing or consuming events); `url` is NATS_URL, one server or several. */
export async function openJetStream(options: { url: string | NatsServers; name: string; inboxPrefix?: string }): Promise<JetStreamContext> {
  const connection = await connect({
    ...natsConnectOptions(options.url, options.inboxPrefix),
    name: options.name,
    maxReconnectAttempts: -1,
    noAsyncTraces: true,
  });
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
 * The JetStream API's answers when a stream cannot have the replicas asked for: a server that is
 * not in a cluster holds one (10074), a cluster places each replica on another server (10005 no
 * suitable peers, 10023 insufficient resources).
 */
const REPLICAS_REFUSED_CODES = new Set([10074, 10005, 10023]);

/** NATS cannot hold a stream with the replicas RELAY_JETSTREAM_REPLICAS asks for; the process does not start. */
export class JetStreamReplicasError extends Error {
  constructor(stream: string, replicas: number, cause: JetStreamApiError) {
    super(
      `RELAY_JETSTREAM_REPLICAS=${replicas}: NATS cannot keep stream ${stream} on ${replicas} servers (${cause.message}); ` +
        'a server outside a cluster holds 1 replica, a cluster at most as many as it has JetStream servers up',
      { cause },
    );
    this.name = 'JetStreamReplicasError';
  }
}

function refusedReplicas(error: unknown, stream: string, replicas: number | undefined): unknown {
  return error instanceof JetStreamApiError && REPLICAS_REFUSED_CODES.has(error.code) && replicas !== undefined
    ? new JetStreamReplicasError(stream, replicas, error)
    : error;
}

const streamLogger = new Logger('JetStream');

/**
 * Returns the stream's info, creating it with `config` when it does not exist. Two processes
 * creating it at once is fine: the loser reads the winner's stream. An existing stream with
 * another replica count than `config.num_replicas` is changed to it (its consumers that do not set
 * their own follow); a count NATS cannot place throws a JetStreamReplicasError. One with another
 * byte limit than `limits.maxBytes` is changed to it.
 */
export async function ensureStream(
  jsm: JetStreamManager,
  config: Partial<StreamConfig> & { name: string },
  logger: LoggerService = streamLogger,
  limits: { maxBytes?: number } = {},
): Promise<StreamInfo> {
  let existing: StreamInfo | undefined;
  try {
    existing = await jsm.streams.info(config.name);
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  if (existing) return matchReplicas(jsm, await matchMaxBytes(jsm, existing, limits.maxBytes, logger), config.num_replicas, logger);
  try {
    return await jsm.streams.add(config);
  } catch (error) {
    let winner: StreamInfo;
    try {
      winner = await jsm.streams.info(config.name);
    } catch {
      throw refusedReplicas(error, config.name, config.num_replicas);
    }
    return matchReplicas(jsm, await matchMaxBytes(jsm, winner, limits.maxBytes, logger), config.num_replicas, logger);
  }
}

/**
 * The stream changed to hold at most `maxBytes` (its oldest messages go past it) when it has another
 * limit (logged); undefined leaves it as it is.
 */
export async function matchMaxBytes(
  jsm: JetStreamManager,
  info: StreamInfo,
  maxBytes: number | undefined,
  logger: LoggerService = streamLogger,
): Promise<StreamInfo> {
  if (maxBytes === undefined || info.config.max_bytes === maxBytes) return info;
  const updated = await jsm.streams.update(info.config.name, { ...info.config, max_bytes: maxBytes });
  logger.log(`stream ${info.config.name} changed from ${info.config.max_bytes} to ${maxBytes} bytes at most`);
  return updated;
}

/** The stream changed to `replicas` servers when it has another count (logged); a count NATS cannot place throws a JetStreamReplicasError. */
export async function matchReplicas(
  jsm: JetStreamManager,
  info: StreamInfo,
  replicas: number | undefined,
  logger: LoggerService = streamLogger,
): Promise<StreamInfo> {
  if (replicas === undefined || info.config.num_replicas === replicas) return info;
  const name = info.config.name;
  try {
    const updated = await jsm.streams.update(name, { ...info.config, num_replicas: replicas });
    logger.log(`stream ${name} changed from ${info.config.num_replicas} to ${replicas} replicas (RELAY_JETSTREAM_REPLICAS)`);
    return updated;
  } catch (error) {
    throw refusedReplicas(error, name, replicas);
  }
}

/**
 * Ensures the file-backed event stream of a subject prefix exists, on `replicas` servers, holding at
 * most `maxBytes` (made with DEFAULT_EVENT_STREAM_MAX_BYTES when not given; an existing stream is
 * changed to a given one: each service does so as it starts, with RELAY_EVENT_STREAM_MAX_BYTES).
 */
export function ensureEventStream(
  jsm: JetStreamManager,
  subjectPrefix: string,
  replicas?: number,
  logger?: LoggerService,
  deploymentId?: string,
  maxBytes?: number,
): Promise<StreamInfo> {
  return ensureStream(
    jsm,
    {
      name: eventStreamName(subjectPrefix),
      num_replicas: replicas,
      subjects: eventStreamSubjects(subjectPrefix),
      storage: StorageType.File,
      retention: RetentionPolicy.Limits,
      discard: DiscardPolicy.Old,
      max_age: nanos(EVENT_STREAM_MAX_AGE_MS),
      max_bytes: maxBytes ?? DEFAULT_EVENT_STREAM_MAX_BYTES,
      duplicate_window: nanos(EVENT_DUPLICATE_WINDOW_MS),
      ...(deploymentId ? { description: deploymentDescription(deploymentId) } : {}),
    },
    logger,
    { maxBytes },
  );
}

/**
 * How the event stream names the deployment that owns it. Its `description`, not its `metadata`
 * (NATS 2.10): the relay runs on NATS 2.9 as well.
 */
export function deploymentDescription(deploymentId: string): string {
  return `agentrelay deployment ${deploymentId}`;
}

/** The deployment a stream's description names; undefined for a stream made by a relay from before deployment ids. */
export function streamDeployment(info: StreamInfo): string | undefined {
  return /^agentrelay deployment (\S+)$/.exec(info.config.description ?? '')?.[1];
}

/** The event stream of the service's subject prefix belongs to another relay database; the process does not start. */
export class DeploymentConflictError extends Error {
  constructor(subjectPrefix: string, stream: string, theirs: string, ours: string) {
    super(
      `NATS_SUBJECT_PREFIX=${JSON.stringify(subjectPrefix)} is already served by another AgentRelay deployment ` +
        `(stream ${stream} has deployment ${theirs}, this database has ${ours}): ` +
        'give each deployment its own NATS_SUBJECT_PREFIX or its own NATS credentials/account',
    );
    this.name = 'DeploymentConflictError';
  }
}

/**
 * The event stream of `subjectPrefix` held for `deploymentId`: made with it, claimed when it names
 * no deployment (made by an older relay; logged), and a DeploymentConflictError when it names another.
 */
export async function claimEventStream(
  jsm: JetStreamManager,
  options: { subjectPrefix: string; deploymentId: string; replicas?: number; maxBytes?: number },
  logger: LoggerService = streamLogger,
): Promise<StreamInfo> {
  const { subjectPrefix, deploymentId } = options;
  let info = await ensureEventStream(jsm, subjectPrefix, options.replicas, logger, deploymentId, options.maxBytes);
  let owner = streamDeployment(info);
  if (owner === undefined) {
    info = await jsm.streams.update(info.config.name, { ...info.config, description: deploymentDescription(deploymentId) });
    logger.log(`stream ${info.config.name} named no deployment: claimed for deployment ${deploymentId}`);
    owner = streamDeployment(info);
  }
  if (owner !== deploymentId) throw new DeploymentConflictError(subjectPrefix, info.config.name, owner ?? '(none)', deploymentId);
  return info;
}

/**
 * Run as a service starts: the event stream of its prefix exists on RELAY_JETSTREAM_REPLICAS
 * servers (an existing one is changed to that count) and belongs to the service's deployment (see
 * claimEventStream). Replicas NATS cannot place stop the start with a JetStreamReplicasError,
 * another deployment's stream with a DeploymentConflictError; any other failure (JetStream not
 * answering yet) is logged and left to the service's own retries.
 */
export async function prepareEventStream(
  options: {
    natsUrl: string | NatsServers;
    subjectPrefix: string;
    replicas: number;
    maxBytes?: number;
    name: string;
    deploymentId: string;
    inboxPrefix?: string;
  },
  logger: LoggerService = streamLogger,
): Promise<void> {
  let context: JetStreamContext | undefined;
  try {
    context = await openJetStream({ url: options.natsUrl, name: options.name, inboxPrefix: options.inboxPrefix });
    await claimEventStream(context.jsm, options, logger);
  } catch (error) {
    if (error instanceof JetStreamReplicasError || error instanceof DeploymentConflictError) throw error;
    logger.warn(`event stream ${eventStreamName(options.subjectPrefix)} not checked at start: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    await context?.connection.close().catch(() => undefined);
  }
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
