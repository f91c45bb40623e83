import { RelayError, type DialectKind, type WireVersion } from '@app/contracts';

/** How a request is answered: AgentRelay shapes or standard A2A shapes of its wire version (docs/dialects.md). */
export type Dialect = { kind: Extract<DialectKind, 'agentrelay'> } | { kind: Extract<DialectKind, 'a2a'>; version: WireVersion };

export const CANONICAL_METHODS = [
  'send',
  'stream',
  'get',
  'list',
  'cancel',
  'resubscribe',
  'update',
  'complete',
  'update_status',
  'push_config_set',
  'push_config_get',
  'push_config_list',
  'push_config_delete',
  'extended_card',
  'watch',
  'search',
] as const;
export type CanonicalMethod = (typeof CANONICAL_METHODS)[number];

/** Both spellings of every method, whatever the version header says (docs/dialects.md#method-names-and-aliases). */
const METHOD_ALIASES: Record<string, CanonicalMethod> = {
  'message/send': 'send',
  SendMessage: 'send',
  'message/stream': 'stream',
  SendStreamingMessage: 'stream',
  'tasks/get': 'get',
  GetTask: 'get',
  'tasks/list': 'list',
  ListTasks: 'list',
  'tasks/cancel': 'cancel',
  CancelTask: 'cancel',
  'tasks/resubscribe': 'resubscribe',
  SubscribeToTask: 'resubscribe',
  'tasks/update': 'update',
  'tasks/complete': 'complete',
  CompleteTask: 'complete',
  'tasks/updateStatus': 'update_status',
  UpdateStatus: 'update_status',
  'tasks/pushNotificationConfig/set': 'push_config_set',
  CreateTaskPushNotificationConfig: 'push_config_set',
  'tasks/pushNotificationConfig/get': 'push_config_get',
  GetTaskPushNotificationConfig: 'push_config_get',
  'tasks/pushNotificationConfig/list': 'push_config_list',
  ListTaskPushNotificationConfigs: 'push_config_list',
  'tasks/pushNotificationConfig/delete': 'push_config_delete',
  DeleteTaskPushNotificationConfig: 'push_config_delete',
  'agent/getAuthenticatedExtendedCard': 'extended_card',
  GetExtendedAgentCard: 'extended_card',
  'tasks/watch': 'watch',
  'tasks/search': 'search',
};

export function canonicalMethod(method: string): CanonicalMethod | undefined {
  return Object.prototype.hasOwnProperty.call(METHOD_ALIASES, method) ? METHOD_ALIASES[method] : undefined;
}

/**
 * Reads the `A2A-Version` header: missing, empty or `0.3` → 0.3; `1.0` → 1.0 (a patch part such as
 * `1.0.2` is ignored); anything else is `version_not_supported`.
 */
export function negotiateVersion(header: string | string[] | undefined): WireVersion {
  const raw = (Array.isArray(header) ? header[0] : header)?.trim() ?? '';
  if (raw === '') return '0.3';
  const match = /^(\d+)\.(\d+)(?:\.\d+)?$/.exec(raw);
  const majorMinor = match ? `${Number(match[1])}.${Number(match[2])}` : undefined;
  if (majorMinor === '0.3') return '0.3';
  if (majorMinor === '1.0') return '1.0';
  throw new RelayError('version_not_supported', `The requested A2A protocol version '${raw}' is not supported. Supported versions: 1.0, 0.3`, {
    requested: raw,
    supported: ['1.0', '0.3'],
  });
}

const AGENTRELAY_PARAM_FIELDS = ['task_id', 'recipient', 'filter', 'transition'];

function usesAgentRelayParams(params: unknown): boolean {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return false;
  const record = params as Record<string, unknown>;
  if (AGENTRELAY_PARAM_FIELDS.some((field) => field in record)) return true;
  const message = record.message;
  if (typeof message !== 'object' || message === null) return false;
  const parts = (message as Record<string, unknown>).parts;
  return Array.isArray(parts) && parts.some((part) => typeof part === 'object' && part !== null && 'type' in part);
}

/**
 * Decides the dialect of a request (docs/dialects.md#how-the-relay-picks-a-dialect). The live
 * inbox (`tasks/watch`) and the search (`tasks/search`) are always AgentRelay; otherwise a 1.0 header always means A2A v1.0. Without it, `tasks/update` and `tasks/list`, and any request
 * whose params use the AgentRelay fields, are AgentRelay; the rest is A2A v0.3. When the caller
 * passes the method as it was spelled, the A2A-only spelling `ListTasks` (without AgentRelay
 * params) stays standard A2A whatever the header.
 */
export function chooseDialect(version: WireVersion, method: CanonicalMethod, params: unknown, spelledMethod?: string): Dialect {
  // The live inbox and the search exist only in the AgentRelay dialect, whatever the header.
  if (method === 'watch' || method === 'search') return { kind: 'agentrelay' };
  if (version === '1.0') return { kind: 'a2a', version };
  if (method === 'list' && spelledMethod === 'ListTasks' && !usesAgentRelayParams(params)) return { kind: 'a2a', version };
  if (method === 'update' || method === 'list') return { kind: 'agentrelay' };
  if (usesAgentRelayParams(params)) return { kind: 'agentrelay' };
  return { kind: 'a2a', version };
}
