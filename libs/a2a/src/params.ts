import { invalidParams, isStorableTimestamp, listFilterTimestamp, TASK_LIMITS, type TaskState } from '@app/contracts';
import { fromWireState } from './mapping';
import { isRecord, optionalMetadata, optionalString, parseArtifacts, parseMessage, type A2aArtifactInput, type A2aMessageInput } from './parse';
import { normalizeProtoJson } from './protojson';
import { parseInlinePushConfig, type PushConfigFields } from './push-config';

/**
 * Typed readers of the standard A2A methods' params, both wire versions. Each takes the raw
 * `params` of the JSON-RPC envelope, normalizes it from ProtoJSON (camelCase or snake_case) and
 * throws `invalid_params` naming the offending field.
 */

function paramsRecord(params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (!isRecord(params)) throw invalidParams('params', 'must be a JSON object');
  return normalizeProtoJson(params) as Record<string, unknown>;
}

/** ProtoJSON int32: a JSON number, or a string of digits. */
function optionalInt(record: Record<string, unknown>, key: string, field: string, min: number, max: number): number | undefined {
  const raw = record[key];
  if (raw === undefined || raw === null) return undefined;
  const value = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalidParams(field, `must be an integer from ${min} to ${max}`);
  return value;
}

function optionalBool(record: Record<string, unknown>, key: string, field: string): boolean | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidParams(field, 'must be a boolean');
  return value;
}

function requiredId(record: Record<string, unknown>): string {
  const id = optionalString(record, 'id', 'id', TASK_LIMITS.a2aIdChars) ?? optionalString(record, 'taskId', 'taskId', TASK_LIMITS.a2aIdChars);
  if (id === undefined) throw invalidParams('id', 'is required');
  return id;
}

function paramsMetadata(record: Record<string, unknown>, field = 'metadata'): Record<string, unknown> | undefined {
  return optionalMetadata(record, 'metadata', field);
}

export interface SendParams {
  message: A2aMessageInput;
  /** v1.0 `returnImmediately: false` / v0.3 `blocking: true`, and the default. */
  blocking: boolean;
  historyLength?: number;
  /** The recipient of a new task on `POST /a2a`: the `recipient` param or `metadata.recipient`. */
  recipient?: string;
  metadata?: Record<string, unknown>;
  /** A push-notification config to register on the task (v1.0 `taskPushNotificationConfig`, v0.3 `pushNotificationConfig`). */
  pushConfig?: PushConfigFields;
}

export function parseSendParams(params: unknown): SendParams {
  const record = paramsRecord(params);
  const message = parseMessage(record.message);
  const configuration = record.configuration;
  if (configuration !== undefined && configuration !== null && !isRecord(configuration)) throw invalidParams('configuration', 'must be a JSON object');
  const config = (configuration ?? {}) as Record<string, unknown>;
  const returnImmediately = optionalBool(config, 'returnImmediately', 'configuration.returnImmediately');
  const blockingFlag = optionalBool(config, 'blocking', 'configuration.blocking');
  const historyLength = optionalInt(config, 'historyLength', 'configuration.historyLength', 0, TASK_LIMITS.historyLengthMax);
  const metadata = paramsMetadata(record);
  const recipientSource = record.recipient ?? message.metadata?.recipient ?? metadata?.recipient;
  if (recipientSource !== undefined && recipientSource !== null && typeof recipientSource !== 'string')
    throw invalidParams('recipient', 'must be an agent handle');
  const blocking = returnImmediately !== undefined ? !returnImmediately : (blockingFlag ?? true);
  const pushConfig = parseInlinePushConfig(config);
  return {
    message,
    blocking,
    ...(pushConfig !== undefined ? { pushConfig } : {}),
    ...(historyLength !== undefined ? { historyLength } : {}),
    ...(typeof recipientSource === 'string' && recipientSource !== '' ? { recipient: recipientSource } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
  };
}

export interface GetParams {
  id: string;
  historyLength?: number;
}

export function parseGetParams(params: unknown): GetParams {
  const record = paramsRecord(params);
  const historyLength = optionalInt(record, 'historyLength', 'historyLength', 0, TASK_LIMITS.historyLengthMax);
  return { id: requiredId(record), ...(historyLength !== undefined ? { historyLength } : {}) };
}

export interface ListParams {
  pageSize: number;
  pageToken?: string;
  contextId?: string;
  status?: TaskState;
  statusTimestampAfter?: string;
  historyLength?: number;
  includeArtifacts: boolean;
}

export function parseListParams(params: unknown): ListParams {
  const record = paramsRecord(params);
  const pageSize = optionalInt(record, 'pageSize', 'pageSize', 0, TASK_LIMITS.a2aPageSizeMax);
  const pageToken = optionalString(record, 'pageToken', 'pageToken', TASK_LIMITS.a2aPageTokenChars);
  const contextId = optionalString(record, 'contextId', 'contextId', TASK_LIMITS.contextIdChars);
  const status = fromWireState(record.status, 'status');
  const after = optionalString(record, 'statusTimestampAfter', 'statusTimestampAfter', 64);
  let statusTimestampAfter: string | undefined;
  if (after !== undefined) {
    const time = Date.parse(after);
    if (!/^\d{4}-\d{2}-\d{2}T/.test(after) || Number.isNaN(time)) throw invalidParams('statusTimestampAfter', 'must be an RFC 3339 timestamp');
    if (!isStorableTimestamp(time)) throw invalidParams('statusTimestampAfter', 'must lie in the years 1 to 9999 (UTC)');
    statusTimestampAfter = listFilterTimestamp(time);
  }
  const historyLength = optionalInt(record, 'historyLength', 'historyLength', 0, TASK_LIMITS.historyLengthMax);
  return {
    pageSize: pageSize === undefined || pageSize === 0 ? TASK_LIMITS.a2aPageSizeDefault : pageSize,
    ...(pageToken !== undefined ? { pageToken } : {}),
    ...(contextId !== undefined ? { contextId } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(statusTimestampAfter !== undefined ? { statusTimestampAfter } : {}),
    ...(historyLength !== undefined ? { historyLength } : {}),
    includeArtifacts: optionalBool(record, 'includeArtifacts', 'includeArtifacts') ?? false,
  };
}

export interface CancelParams {
  id: string;
  metadata?: Record<string, unknown>;
}

export function parseCancelParams(params: unknown): CancelParams {
  const record = paramsRecord(params);
  const metadata = paramsMetadata(record);
  return { id: requiredId(record), ...(metadata !== undefined ? { metadata } : {}) };
}

/**
 * A status message of the agent-side methods: a full A2A Message, or a bare string taken as its
 * text (docs/dialects.md#agent-side-methods).
 */
function statusMessage(value: unknown, field: string): A2aMessageInput | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return { parts: [{ kind: 'text', text: value }], body: value };
  return parseMessage(value, field);
}

export interface CompleteParams {
  id: string;
  artifacts: A2aArtifactInput[];
  message?: A2aMessageInput;
}

/** `tasks/complete` / `CompleteTask` (docs/dialects.md#agent-side-methods): the recipient completes, with artifacts. */
export function parseCompleteParams(params: unknown): CompleteParams {
  const record = paramsRecord(params);
  const status = record.status;
  const message = statusMessage(record.message, 'message') ?? (isRecord(status) ? statusMessage(status.message, 'status.message') : undefined);
  return { id: requiredId(record), artifacts: parseArtifacts(record.artifacts, 'artifacts'), ...(message !== undefined ? { message } : {}) };
}

/** The states an agent may report with `UpdateStatus`. */
export type ReportedState = 'accepted' | 'input_required' | 'completed' | 'failed' | 'rejected';
const REPORTABLE: readonly TaskState[] = ['accepted', 'input_required', 'completed', 'failed', 'rejected'];

export interface UpdateStatusParams {
  id: string;
  /** The state the report implies; undefined for a progress report without a state. */
  state?: ReportedState;
  message?: A2aMessageInput;
  artifacts: A2aArtifactInput[];
}

/** `tasks/updateStatus` / `UpdateStatus` (docs/dialects.md#agent-side-methods): the recipient reports progress. */
export function parseUpdateStatusParams(params: unknown): UpdateStatusParams {
  const record = paramsRecord(params);
  const status = record.status;
  if (status !== undefined && status !== null && !isRecord(status)) throw invalidParams('status', 'must be a TaskStatus object');
  const statusRecord = (status ?? {}) as Record<string, unknown>;
  const state = fromWireState(statusRecord.state ?? record.state, status ? 'status.state' : 'state');
  if (state !== undefined && !REPORTABLE.includes(state)) {
    throw invalidParams(status ? 'status.state' : 'state', 'must be working, input-required, completed, failed or rejected');
  }
  const message = statusMessage(statusRecord.message, 'status.message') ?? statusMessage(record.message, 'message');
  const artifacts = parseArtifacts(record.artifacts, 'artifacts');
  if (state === undefined && message === undefined && artifacts.length === 0) throw invalidParams('status', 'needs a state, a message or artifacts');
  return {
    id: requiredId(record),
    ...(state !== undefined ? { state: state as ReportedState } : {}),
    ...(message !== undefined ? { message } : {}),
    artifacts,
  };
}
