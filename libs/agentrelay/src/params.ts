import {
  ARTIFACT_TYPES,
  INTENTS,
  metadataBoundsProblem,
  invalidParams,
  isStorableTimestamp,
  listFilterTimestamp,
  TASK_LIMITS,
  TASK_STATES,
  type ArtifactInput,
  type ArtifactType,
  type Intent,
  type MessageInput,
  type PartView,
  type ProposedAction,
  type TaskState,
} from '@app/contracts';

/** The params of each AgentRelay method, checked field by field (-32602 names the field; docs/dialects.md#agentrelay). */
type Params = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function requiredNonBlank(params: Params, key: string, field: string, max: number): string {
  const value = params[key];
  if (typeof value !== 'string' || value.trim() === '') throw invalidParams(field, 'is required and must be a non-empty string');
  if (value.length > max) throw invalidParams(field, `must be at most ${max} characters`);
  return value;
}

export function optionalNonBlank(params: Params, key: string, field: string, max: number): string | undefined {
  if (!present(params[key])) return undefined;
  return requiredNonBlank(params, key, field, max);
}

/** A string field, when it is one, of at most `max` characters. */
function atMostChars(params: Params, key: string, field: string, max: number): void {
  const value = params[key];
  if (typeof value === 'string' && value.length > max) throw invalidParams(field, `must be at most ${max} characters`);
}

function optionalObject(params: Params, key: string, field = key): Record<string, unknown> | undefined {
  const value = params[key];
  if (!present(value)) return undefined;
  if (!isRecord(value)) throw invalidParams(field, 'must be an object');
  return value;
}

/** A metadata (or payload) object, within the relay's bounds (keys per object, depth, bytes). */
function optionalMetadata(params: Params, key: string, field = key): Record<string, unknown> | undefined {
  const value = optionalObject(params, key, field);
  const problem = value === undefined ? undefined : metadataBoundsProblem(value);
  if (problem !== undefined) throw invalidParams(field, problem);
  return value;
}

export function parseTaskId(params: Params): string {
  return requiredNonBlank(params, 'task_id', 'task_id', TASK_LIMITS.taskIdChars);
}

/** `parent_task_id`: the handoff a new task serves (docs/chains.md); a message on a task has its task already. */
export function parseParentTaskId(params: Params): string | undefined {
  if (!present(params.parent_task_id)) return undefined;
  if (present(params.task_id)) throw invalidParams('parent_task_id', 'names the handoff a new task serves: a message on an existing task takes no parent');
  return requiredNonBlank(params, 'parent_task_id', 'parent_task_id', TASK_LIMITS.taskIdChars);
}

function parseRelayPart(value: unknown, field: string): PartView {
  if (!isRecord(value)) throw invalidParams(field, 'must be a part object');
  const metadata = optionalMetadata(value, 'metadata', `${field}.metadata`);
  const extra = metadata ? { metadata } : {};
  const type = value.type ?? value.kind;
  switch (type) {
    case 'text': {
      const text = value.text;
      if (typeof text !== 'string') throw invalidParams(`${field}.text`, 'must be a string');
      if (text.length > TASK_LIMITS.textPartChars) throw invalidParams(`${field}.text`, `must be at most ${TASK_LIMITS.textPartChars} characters`);
      return { kind: 'text', text, ...extra };
    }
    case 'data': {
      if (!present(value.data) || value.data === '') throw invalidParams(`${field}.data`, 'is required for a data part');
      const problem = metadataBoundsProblem(value.data);
      if (problem !== undefined) throw invalidParams(`${field}.data`, problem);
      return { kind: 'data', data: value.data, ...extra };
    }
    case 'file': {
      const file = optionalObject(value, 'file', `${field}.file`);
      if (!file || (typeof file.uri !== 'string' && typeof file.bytes !== 'string')) throw invalidParams(`${field}.file`, 'needs a uri or bytes');
      atMostChars(file, 'name', `${field}.file.name`, TASK_LIMITS.fileNameChars);
      atMostChars(file, 'mime_type', `${field}.file.mime_type`, TASK_LIMITS.mediaTypeChars);
      atMostChars(file, 'uri', `${field}.file.uri`, TASK_LIMITS.fileUriChars);
      return { kind: 'file', file: file as { name?: string; mime_type?: string; bytes?: string; uri?: string }, ...extra };
    }
    default:
      throw invalidParams(`${field}.type`, 'must be one of text, data, file');
  }
}

/** `message` of message/send and request_input: `{role?, parts: [{type: "text", text}], payload?}`. */
/** tasks/get's `after_sequence_no`: the page of messages after this sequence number (0, the first page, when absent). */
export function parseAfterSequenceNo(params: Params): number {
  const value = params.after_sequence_no;
  if (value === undefined || value === null) return 0;
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > TASK_LIMITS.sequenceNoMax) {
    throw invalidParams('after_sequence_no', `must be an integer from 0 to ${TASK_LIMITS.sequenceNoMax}`);
  }
  return value as number;
}

export function parseRelayMessage(params: Params, key = 'message'): MessageInput {
  const message = params[key];
  if (!isRecord(message)) throw invalidParams(key, 'is required and must be an object with parts');
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw invalidParams(`${key}.parts`, 'must be an array with at least one part');
  if (parts.length > TASK_LIMITS.partsPerMessage) throw invalidParams(`${key}.parts`, `must hold at most ${TASK_LIMITS.partsPerMessage} parts`);
  if (present(message.role) && typeof message.role !== 'string') throw invalidParams(`${key}.role`, 'must be a string');
  const messageId =
    optionalNonBlank(message, 'message_id', `${key}.message_id`, TASK_LIMITS.messageIdChars) ??
    optionalNonBlank(message, 'messageId', `${key}.messageId`, TASK_LIMITS.messageIdChars);
  const payload = optionalMetadata(message, 'payload', `${key}.payload`) ?? optionalMetadata(message, 'metadata', `${key}.metadata`);
  return {
    ...(messageId !== undefined ? { message_id: messageId } : {}),
    parts: parts.map((part, index) => parseRelayPart(part, `${key}.parts[${index}]`)),
    ...(payload !== undefined ? { payload } : {}),
  };
}

export function parseIntent(params: Params): Intent | undefined {
  const intent = params.intent;
  if (!present(intent)) return undefined;
  if (typeof intent !== 'string' || !(INTENTS as readonly string[]).includes(intent)) throw invalidParams('intent', `must be one of ${INTENTS.join(', ')}`);
  return intent as Intent;
}

export function parseProposedAction(params: Params): ProposedAction | null {
  const action = params.proposed_action;
  if (!present(action)) return null;
  if (!isRecord(action)) throw invalidParams('proposed_action', 'must be an object or null');
  const description = requiredNonBlank(action, 'description', 'proposed_action.description', TASK_LIMITS.proposedActionTextChars);
  const rationale = requiredNonBlank(action, 'rationale', 'proposed_action.rationale', TASK_LIMITS.proposedActionTextChars);
  const targets = action.target_files;
  if (!Array.isArray(targets) || !targets.every((target) => typeof target === 'string' && target.length <= TASK_LIMITS.proposedActionTargetFileChars)) {
    throw invalidParams(
      'proposed_action.target_files',
      `is required and must be an array of paths of at most ${TASK_LIMITS.proposedActionTargetFileChars} characters`,
    );
  }
  if (targets.length > TASK_LIMITS.proposedActionTargetFiles) {
    throw invalidParams('proposed_action.target_files', `must hold at most ${TASK_LIMITS.proposedActionTargetFiles} paths`);
  }
  const suggested = action.suggested_diff;
  if (present(suggested) && typeof suggested !== 'string') throw invalidParams('proposed_action.suggested_diff', 'must be a string or null');
  if (typeof suggested === 'string' && suggested.length > TASK_LIMITS.artifactFieldChars) {
    throw invalidParams('proposed_action.suggested_diff', `must be at most ${TASK_LIMITS.artifactFieldChars} characters`);
  }
  const unknown = Object.keys(action).find((key) => !['description', 'rationale', 'target_files', 'suggested_diff'].includes(key));
  if (unknown !== undefined) throw invalidParams(`proposed_action.${unknown}`, 'is not a field of proposed_action');
  return { description, target_files: targets as string[], rationale, ...(present(suggested) ? { suggested_diff: suggested as string } : {}) };
}

/** AgentRelay typed artifacts: `{type: "file_diff", path, diff}` and the other four types (fields checked by the tasks service). */
export function parseRelayArtifacts(params: Params): ArtifactInput[] | undefined {
  const artifacts = params.artifacts;
  if (!present(artifacts)) return undefined;
  if (!Array.isArray(artifacts)) throw invalidParams('artifacts', 'must be an array');
  if (artifacts.length > TASK_LIMITS.artifactsPerRequest) throw invalidParams('artifacts', `must hold at most ${TASK_LIMITS.artifactsPerRequest} artifacts`);
  return artifacts.map((artifact, index) => {
    const field = `artifacts.${index}`;
    if (!isRecord(artifact)) throw invalidParams(field, 'must be an artifact object');
    const { type, ...fields } = artifact;
    if (typeof type !== 'string' || !(ARTIFACT_TYPES as readonly string[]).includes(type)) {
      throw invalidParams(`${field}.type`, `must be one of ${ARTIFACT_TYPES.join(', ')}`);
    }
    return { type: type as ArtifactType, fields };
  });
}

export function parseIdempotencyKey(metadata: Record<string, unknown> | undefined): string | undefined {
  if (!metadata || !present(metadata.client_idempotency_key)) return undefined;
  return requiredNonBlank(metadata, 'client_idempotency_key', 'metadata.client_idempotency_key', TASK_LIMITS.idempotencyKeyChars);
}

export function parseMetadata(params: Params): Record<string, unknown> | undefined {
  return optionalMetadata(params, 'metadata');
}

export interface RelayListParams {
  role: 'recipient' | 'sender';
  states?: TaskState[];
  since?: string;
  limit: number;
  cursor?: string;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

export function parseRelayListParams(params: Params): RelayListParams {
  const filter = optionalObject(params, 'filter') ?? {};
  const page = optionalObject(params, 'page') ?? {};
  const role = filter.role ?? 'recipient';
  if (role !== 'recipient' && role !== 'sender') throw invalidParams('filter.role', 'must be recipient or sender');
  let states: TaskState[] | undefined;
  if (present(filter.status)) {
    const raw = typeof filter.status === 'string' ? [filter.status] : filter.status;
    if (!Array.isArray(raw) || !raw.every((state) => typeof state === 'string' && (TASK_STATES as readonly string[]).includes(state))) {
      throw invalidParams('filter.status', `must be an array of states (${TASK_STATES.join(', ')})`);
    }
    states = raw as TaskState[];
  }
  let since: string | undefined;
  if (present(filter.since)) {
    if (typeof filter.since !== 'string' || !ISO_8601.test(filter.since) || Number.isNaN(Date.parse(filter.since))) {
      throw invalidParams('filter.since', 'must be an ISO 8601 timestamp');
    }
    if (!isStorableTimestamp(Date.parse(filter.since))) throw invalidParams('filter.since', 'must lie in the years 1 to 9999 (UTC)');
    since = listFilterTimestamp(Date.parse(filter.since));
  }
  let limit: number = TASK_LIMITS.listDefaultLimit;
  if (present(page.limit)) {
    if (!Number.isInteger(page.limit) || (page.limit as number) < 1 || (page.limit as number) > TASK_LIMITS.listMaxLimit) {
      throw invalidParams('page.limit', `must be an integer from 1 to ${TASK_LIMITS.listMaxLimit}`);
    }
    limit = page.limit as number;
  }
  const cursor = present(page.cursor) ? requiredNonBlank(page, 'cursor', 'page.cursor', TASK_LIMITS.listCursorChars) : undefined;
  return { role, ...(states ? { states } : {}), ...(since ? { since } : {}), limit, ...(cursor ? { cursor } : {}) };
}
