import { invalidParams } from '@app/contracts';
import { boundedData, isRecord } from './parse';
import type { Json } from './render';

/**
 * The A2A v0.3 HTTP+JSON binding (`/v1/…`) speaks the ProtoJSON of the v0.3 proto, which differs
 * from v1.0's in a few places: a message's parts are `content`, a file part is
 * `{file: {fileWithUri | fileWithBytes, mimeType}}`, a data part `{data: {data}}`, a send answers
 * `{task}` or `{msg}`, a push config is `{name, pushNotificationConfig}`, and stream status events
 * carry `final`. These functions translate requests into the v0.3 JSON-RPC params the parsers
 * read, and v1.0 renderings into the v0.3 proto shapes, so no method is written twice.
 */

const V03_ROLES: Record<string, string> = { ROLE_USER: 'user', ROLE_AGENT: 'agent' };

/** States after which a v0.3 stream ends (`final: true`): terminal and input-required. */
const FINAL_STATES = new Set(['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED', 'TASK_STATE_INPUT_REQUIRED']);

function protoPartToParams(part: unknown, field: string): Json {
  if (!isRecord(part)) throw invalidParams(field, 'must be a Part object');
  if (typeof part.text === 'string') return { kind: 'text', text: part.text };
  if (isRecord(part.file)) {
    const file = part.file;
    const mimeType = file.mimeType ?? file.mime_type;
    const uri = file.fileWithUri ?? file.file_with_uri;
    const bytes = file.fileWithBytes ?? file.file_with_bytes;
    return { kind: 'file', file: { ...(uri !== undefined ? { uri } : { bytes }), ...(mimeType !== undefined ? { mimeType } : {}) } };
  }
  if (isRecord(part.data)) return { kind: 'data', data: boundedData(part.data.data, `${field}.data.data`) };
  throw invalidParams(field, 'must hold text, file or data');
}

/** A v0.3 proto Message as v0.3 JSON-RPC params read it. */
export function protoMessageToParams(message: unknown, field = 'message'): Json {
  if (!isRecord(message)) throw invalidParams(field, 'is required and must be a Message object');
  const { content, parts, role, ...rest } = message;
  const source = content ?? parts;
  if (!Array.isArray(source)) throw invalidParams(`${field}.content`, 'must be an array of parts');
  return {
    ...rest,
    ...(role !== undefined ? { role: typeof role === 'string' ? (V03_ROLES[role] ?? role) : role } : {}),
    parts: source.map((part, index) => protoPartToParams(part, `${field}.content[${index}]`)),
  };
}

/**
 * `POST /v1/message:send|stream` body (v0.3 proto SendMessageRequest) as message/send params. A
 * proto3 bool left out is false, and ProtoJSON writers leave it out: no `blocking` is non-blocking.
 */
export function protoSendToParams(body: Json): Json {
  const configuration = isRecord(body.configuration) ? body.configuration : {};
  const { pushNotification, push_notification: pushSnake, ...rest } = configuration;
  const push = pushNotification ?? pushSnake;
  return {
    ...body,
    message: protoMessageToParams(body.message ?? body.request),
    configuration: { ...rest, blocking: rest.blocking ?? false, ...(push !== undefined ? { pushNotificationConfig: push } : {}) },
  };
}

function partToProto(part: Json): Json {
  if (typeof part.text === 'string') return { text: part.text };
  if (part.data !== undefined) return { data: { data: part.data } };
  const file: Json = part.raw !== undefined ? { fileWithBytes: part.raw } : { fileWithUri: part.url };
  if (part.mediaType !== undefined) file.mimeType = part.mediaType;
  return { file };
}

/** A v1.0 Message rendering as a v0.3 proto Message. */
export function messageToProto(message: Json): Json {
  const { parts, ...rest } = message;
  return { ...rest, content: (parts as Json[]).map(partToProto) };
}

/** The v0.3 proto spells one state differently. */
const V03_STATES: Record<string, string> = { TASK_STATE_CANCELED: 'TASK_STATE_CANCELLED' };

function statusToProto(status: Json): Json {
  const state = V03_STATES[status.state as string] ?? status.state;
  return { ...status, state, ...(isRecord(status.message) ? { message: messageToProto(status.message) } : {}) };
}

function artifactToProto(artifact: Json): Json {
  return { ...artifact, parts: (artifact.parts as Json[]).map(partToProto) };
}

/** A v1.0 Task rendering as a v0.3 proto Task. */
export function taskToProto(task: Json): Json {
  const proto: Json = { ...task, status: statusToProto(task.status as Json) };
  if (Array.isArray(task.history)) proto.history = (task.history as Json[]).map(messageToProto);
  if (Array.isArray(task.artifacts)) proto.artifacts = (task.artifacts as Json[]).map(artifactToProto);
  return proto;
}

/** A v1.0 send result (`{task}` or `{message}`) or StreamResponse as the v0.3 proto one. */
export function streamResponseToProto(response: Json): Json {
  if (isRecord(response.task)) return { task: taskToProto(response.task) };
  if (isRecord(response.message)) return { msg: messageToProto(response.message) };
  if (isRecord(response.statusUpdate)) {
    const update = response.statusUpdate;
    const status = update.status as Json;
    return { statusUpdate: { ...update, status: statusToProto(status), final: FINAL_STATES.has(status.state as string) } };
  }
  if (isRecord(response.artifactUpdate)) {
    const update = response.artifactUpdate;
    return { artifactUpdate: { ...update, artifact: artifactToProto(update.artifact as Json), append: false } };
  }
  return response;
}

/** `POST /v1/tasks/{id}/pushNotificationConfigs` body (a v0.3 TaskPushNotificationConfig, or its inner config) as set params. */
export function protoPushConfigToParams(body: Json, taskId: string): Json {
  const inner = isRecord(body.pushNotificationConfig)
    ? body.pushNotificationConfig
    : isRecord(body.push_notification_config)
      ? body.push_notification_config
      : body;
  return { taskId, pushNotificationConfig: inner };
}

/** A v1.0 TaskPushNotificationConfig rendering as the v0.3 proto one (`name` is its resource name). */
export function pushConfigToProto(config: Json): Json {
  const { taskId, authentication, ...inner } = config;
  const auth = isRecord(authentication)
    ? { schemes: [authentication.scheme], ...(authentication.credentials !== undefined ? { credentials: authentication.credentials } : {}) }
    : undefined;
  return {
    name: `tasks/${String(taskId)}/pushNotificationConfigs/${String(inner.id)}`,
    pushNotificationConfig: { ...inner, ...(auth ? { authentication: auth } : {}) },
  };
}
