import { AUTH_SCHEME_TOKEN, invalidParams, ONE_LINE, PUSH_CONFIG_LIMITS, TASK_LIMITS, type WireVersion } from '@app/contracts';
import { isRecord, optionalString } from './parse';
import { normalizeProtoJson } from './protojson';

/**
 * A2A push-notification configs in both wire shapes:
 * - v0.3 `TaskPushNotificationConfig {taskId, pushNotificationConfig: {id?, url, token?, authentication?: {schemes[], credentials?}}}`;
 * - v1.0 flat `TaskPushNotificationConfig {id?, taskId, url, token?, authentication?: {scheme, credentials?}}`.
 */

export interface PushConfigFields {
  /** The config's id; the relay makes one when absent. */
  id?: string;
  url: string;
  token?: string;
  authentication?: { schemes: string[]; credentials?: string };
}

/** A config as the relay returns it (credentials already masked by whoever stores them). */
export interface PushConfigRecord {
  id: string;
  task_id: string;
  url: string;
  token: string | null;
  authentication: { schemes: string[]; credentials: string | null } | null;
}

function paramsRecord(params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) return {};
  if (!isRecord(params)) throw invalidParams('params', 'must be a JSON object');
  return normalizeProtoJson(params) as Record<string, unknown>;
}

function requiredString(record: Record<string, unknown>, key: string, field: string): string {
  const value = optionalString(record, key, field, TASK_LIMITS.a2aIdChars);
  if (value === undefined) throw invalidParams(field, 'is required');
  return value;
}

function oneLine(value: string | undefined, field: string): string | undefined {
  if (value !== undefined && !ONE_LINE.test(value)) throw invalidParams(field, 'must be one line');
  return value;
}

const LOWERCASE_HTTP_SCHEME = /^https?:\/\//;

function httpUrl(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidParams(field, 'is required');
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw invalidParams(field, 'must be an http(s) URL');
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || /\s/.test(value)) throw invalidParams(field, 'must be an http(s) URL');
  if (value.length > PUSH_CONFIG_LIMITS.urlChars) throw invalidParams(field, `must be at most ${PUSH_CONFIG_LIMITS.urlChars} characters`);
  // The URL is stored as written, and the stores admit only the lowercase spelling of the scheme.
  if (!LOWERCASE_HTTP_SCHEME.test(value)) throw invalidParams(field, 'must start with http:// or https:// (lowercase scheme)');
  return value;
}

/** Reads the config fields of either shape (`authentication.schemes[]` in v0.3, `.scheme` in v1.0). */
export function parsePushConfigFields(value: unknown, field: string): PushConfigFields {
  if (!isRecord(value)) throw invalidParams(field, 'must be a push notification config object');
  const id = optionalString(value, 'id', `${field}.id`, PUSH_CONFIG_LIMITS.configIdChars);
  const url = httpUrl(value.url, `${field}.url`);
  const token = oneLine(optionalString(value, 'token', `${field}.token`, PUSH_CONFIG_LIMITS.tokenChars), `${field}.token`);
  let authentication: PushConfigFields['authentication'];
  const auth = value.authentication;
  if (auth !== undefined && auth !== null) {
    if (!isRecord(auth)) throw invalidParams(`${field}.authentication`, 'must be an object');
    const schemes = Array.isArray(auth.schemes) ? auth.schemes : auth.scheme !== undefined ? [auth.scheme] : [];
    if (schemes.length === 0) throw invalidParams(`${field}.authentication`, 'needs a scheme (v1.0 scheme, or v0.3 schemes[])');
    if (schemes.length > PUSH_CONFIG_LIMITS.schemesPerConfig)
      throw invalidParams(`${field}.authentication.schemes`, `must hold at most ${PUSH_CONFIG_LIMITS.schemesPerConfig} schemes`);
    const limit = PUSH_CONFIG_LIMITS.schemeChars;
    if (schemes.some((scheme) => typeof scheme !== 'string' || scheme.length > limit || !AUTH_SCHEME_TOKEN.test(scheme))) {
      throw invalidParams(`${field}.authentication`, `needs schemes that are HTTP auth scheme tokens of at most ${limit} characters`);
    }
    const credentials = oneLine(
      optionalString(auth, 'credentials', `${field}.authentication.credentials`, PUSH_CONFIG_LIMITS.credentialsChars),
      `${field}.authentication.credentials`,
    );
    authentication = { schemes: schemes as string[], ...(credentials !== undefined ? { credentials } : {}) };
  }
  return { ...(id !== undefined ? { id } : {}), url, ...(token !== undefined ? { token } : {}), ...(authentication ? { authentication } : {}) };
}

export interface PushConfigSetParams {
  taskId: string;
  config: PushConfigFields;
}

/** `tasks/pushNotificationConfig/set` (v0.3) / `CreateTaskPushNotificationConfig` (v1.0). */
export function parsePushConfigSetParams(params: unknown): PushConfigSetParams {
  const record = paramsRecord(params);
  const taskId = requiredString(record, 'taskId', 'taskId');
  if (record.pushNotificationConfig !== undefined) return { taskId, config: parsePushConfigFields(record.pushNotificationConfig, 'pushNotificationConfig') };
  return { taskId, config: parsePushConfigFields(record, 'params') };
}

export interface PushConfigRef {
  taskId: string;
  /** Undefined only on a v0.3 get without `pushNotificationConfigId` (the task's only or first config). */
  configId?: string;
}

/**
 * get / delete: v0.3 `{id: <task>, pushNotificationConfigId}`, v1.0 `{taskId, id: <config>}`.
 * The shape is told by `taskId`, whatever the header.
 */
export function parsePushConfigRefParams(params: unknown, requireConfigId: boolean): PushConfigRef {
  const record = paramsRecord(params);
  if (record.taskId !== undefined) {
    const taskId = requiredString(record, 'taskId', 'taskId');
    const configId = requiredString(record, 'id', 'id');
    return { taskId, configId };
  }
  const taskId = requiredString(record, 'id', 'id');
  const configId = optionalString(record, 'pushNotificationConfigId', 'pushNotificationConfigId', TASK_LIMITS.a2aIdChars);
  if (requireConfigId && configId === undefined) throw invalidParams('pushNotificationConfigId', 'is required');
  return { taskId, ...(configId !== undefined ? { configId } : {}) };
}

/** list: v0.3 `{id}`, v1.0 `{taskId, pageSize?, pageToken?}`. */
export function parsePushConfigListParams(params: unknown): { taskId: string } {
  const record = paramsRecord(params);
  return { taskId: record.taskId !== undefined ? requiredString(record, 'taskId', 'taskId') : requiredString(record, 'id', 'id') };
}

/** The inline config of a send: v1.0 `configuration.taskPushNotificationConfig`, v0.3 `configuration.pushNotificationConfig`. */
export function parseInlinePushConfig(configuration: Record<string, unknown>): PushConfigFields | undefined {
  const inline = configuration.taskPushNotificationConfig ?? configuration.pushNotificationConfig;
  if (inline === undefined || inline === null) return undefined;
  const field = configuration.taskPushNotificationConfig !== undefined ? 'configuration.taskPushNotificationConfig' : 'configuration.pushNotificationConfig';
  return parsePushConfigFields(inline, field);
}

export function renderPushConfig(config: PushConfigRecord, version: WireVersion): Record<string, unknown> {
  if (version === '0.3') {
    const inner: Record<string, unknown> = { id: config.id, url: config.url };
    if (config.token !== null) inner.token = config.token;
    if (config.authentication) {
      inner.authentication = {
        schemes: config.authentication.schemes,
        ...(config.authentication.credentials !== null ? { credentials: config.authentication.credentials } : {}),
      };
    }
    return { taskId: config.task_id, pushNotificationConfig: inner };
  }
  const flat: Record<string, unknown> = { id: config.id, taskId: config.task_id, url: config.url };
  if (config.token !== null) flat.token = config.token;
  if (config.authentication) {
    flat.authentication = {
      scheme: config.authentication.schemes[0],
      ...(config.authentication.credentials !== null ? { credentials: config.authentication.credentials } : {}),
    };
  }
  return flat;
}

/** v0.3 list: an array; v1.0: `{configs, nextPageToken}`. */
export function renderPushConfigList(configs: PushConfigRecord[], version: WireVersion): unknown {
  const rendered = configs.map((config) => renderPushConfig(config, version));
  return version === '0.3' ? rendered : { configs: rendered, nextPageToken: '' };
}
