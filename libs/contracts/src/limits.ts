/**
 * Every size limit of the relay, in one place: the edge's parsers (A2A and AgentRelay), the
 * service contracts' validators and the database's constraints all read these numbers (a unit test
 * holds the migrations to them), so an input is refused by the same rule whichever way it comes in.
 */
export const TASK_LIMITS = {
  messagesPerTask: 500,
  tasksPerContext: 100,
  partsPerMessage: 50,
  textPartChars: 100_000,
  artifactsPerRequest: 50,
  /** Artifacts one task holds at most, and their bytes (fields, parts, metadata, name, description) in all: every read carries them. */
  artifactsPerTask: 100,
  artifactBytesPerTask: 384 * 1024,
  /** A typed artifact's string field, URL field, and list field (items, and characters per item). */
  artifactFieldChars: 262_144,
  artifactUrlChars: 8192,
  artifactListItems: 500,
  artifactListItemChars: 1024,
  artifactIdChars: 255,
  artifactNameChars: 1024,
  artifactDescriptionChars: 10_000,
  /** A file part's name (v1.0 `filename`) and media type, and the URI of a file by reference. */
  fileNameChars: 1024,
  mediaTypeChars: 255,
  fileUriChars: 8192,
  messageIdChars: 255,
  /** Task ids are ULIDs; an id longer than this names no task. */
  taskIdChars: 64,
  /** A task or config id as an A2A client may write it; a task id longer than `taskIdChars` names no task (not found). */
  a2aIdChars: 255,
  contextIdChars: 255,
  idempotencyKeyChars: 255,
  sessionIdChars: 255,
  /** The reason of a decline, fail or cancel. */
  reasonChars: 4000,
  proposedActionTextChars: 4000,
  proposedActionTargetFiles: 200,
  proposedActionTargetFileChars: 1024,
  summaryPreviewChars: 200,
  /** The most messages a read may ask for (`history_length`, A2A `historyLength`). */
  historyLengthMax: 100_000,
  listDefaultLimit: 50,
  listMaxLimit: 200,
  listCursorChars: 512,
  /** A2A ListTasks: its `pageSize` (1 to 100, 50 when absent) and the page token the edge wraps a cursor in. */
  a2aPageSizeDefault: 50,
  a2aPageSizeMax: 100,
  a2aPageTokenChars: 1024,
  /** The largest message sequence number a thread can reach (a Postgres integer): `after_sequence_no` is at most this. */
  sequenceNoMax: 2_147_483_647,
  /** Message bytes one reply carries at most (NATS payloads are limited); page with `after_sequence_no`. */
  replyMessageBytes: 512 * 1024,
  /** Bytes of items one list reply carries at most. */
  replyListBytes: 768 * 1024,
  /** Bytes of events (with the task, when a replay starts with it) one event replay carries at most, at least one event; replays page on. */
  replyEventBytes: 768 * 1024,
  /** Keys of one object (or items of one array) inside a metadata or payload object or a `data` part. */
  metadataKeysPerObject: 256,
  /** Nesting of objects and arrays inside a metadata or payload object or a `data` part (the object itself is level 1). */
  metadataDepth: 16,
  /** A metadata or payload object, or the content of a `data` part, serialized as JSON (UTF-8). */
  metadataBytes: 64 * 1024,
} as const;

/** The instants a timestamp param may name: years 1 to 9999 in UTC, what Postgres and ISO 8601 both write. */
const EARLIEST_TIMESTAMP_MS = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST_TIMESTAMP_MS = Date.parse('9999-12-31T23:59:59.999Z');

export function isStorableTimestamp(ms: number): boolean {
  return ms >= EARLIEST_TIMESTAMP_MS && ms <= LATEST_TIMESTAMP_MS;
}

/** A lower bound of a list filter as the tasks service reads it: no task predates 1970, so earlier bounds mean 1970. */
export function listFilterTimestamp(ms: number): string {
  return new Date(Math.max(ms, 0)).toISOString();
}

/** Limits of an agent's fields, kept by the directory; the other services copy id, handle, name and role as they are. */
export const AGENT_LIMITS = {
  /** An agent id (a UUID) as the other services store it. */
  idChars: 64,
  handleChars: 255,
  nameChars: 200,
  roleChars: 100,
  descriptionChars: 2000,
  skills: 50,
  skillChars: 64,
  /** Media types or ranges in an agent's `input_modes`. */
  inputModes: 32,
  emailChars: 320,
  webhookUrlChars: 2048,
  /** The bounds of an agent's own `webhook_timeout_ms`, the timeout of each request to its webhook and push configs. */
  webhookTimeoutMinMs: 1000,
  webhookTimeoutMaxMs: 30000,
  /** An IdP issuer URL and a token `sub` mapped to an agent (docs/dialects.md#bearer-jwts-from-your-identity-provider). */
  tokenIssuerChars: 512,
  tokenSubjectChars: 255,
} as const;

/** Limits of A2A push-notification configs, kept by the tasks service and used by the notifier. */
export const PUSH_CONFIG_LIMITS = {
  /** How many configs one participant may hold on one task. */
  perParticipantAndTask: 10,
  configIdChars: 255,
  urlChars: 2048,
  tokenChars: 4096,
  schemesPerConfig: 10,
  schemeChars: 64,
  credentialsChars: 4096,
} as const;

/**
 * What is wrong with a metadata (or message payload) object or the content of a `data` part against
 * the TASK_LIMITS bounds, or undefined when it is within them. Walks the value once without
 * recursion, stopping at the first object with too many keys or too deep, before serializing it to
 * measure its bytes.
 */
export function metadataBoundsProblem(value: unknown): string | undefined {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > TASK_LIMITS.metadataDepth) return `nests objects and arrays deeper than ${TASK_LIMITS.metadataDepth} levels`;
    const children = Array.isArray(current) ? current : Object.values(current);
    if (children.length > TASK_LIMITS.metadataKeysPerObject) return `has an object or array with more than ${TASK_LIMITS.metadataKeysPerObject} keys`;
    for (const child of children) pending.push({ value: child, depth: depth + 1 });
  }
  if (Buffer.byteLength(JSON.stringify(value)) > TASK_LIMITS.metadataBytes) return `must be at most ${TASK_LIMITS.metadataBytes} bytes as JSON`;
  return undefined;
}
