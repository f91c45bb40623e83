/**
 * The relay's error catalogue. Every domain error has one symbol; the symbol decides the
 * JSON-RPC code in each dialect and, where one applies, the HTTP status.
 */
/** The family of a dialect, which decides the JSON-RPC code of an error: AgentRelay or standard A2A (either wire version). */
export type DialectKind = 'agentrelay' | 'a2a';

export interface ErrorSpec {
  /** Code in the AgentRelay dialect (docs/dialects.md#errors). */
  readonly agentrelay: number;
  /** Code in the standard A2A dialects (v0.3 and v1.0). */
  readonly a2a: number;
  readonly message: string;
  /** HTTP status of the response, when the error is not answered with 200. */
  readonly httpStatus?: number;
  /** v1.0 google.rpc.ErrorInfo reason for the A2A dialect. */
  readonly a2aReason?: string;
}

export const ERROR_CATALOGUE = {
  parse_error: { agentrelay: -32700, a2a: -32700, message: 'Invalid JSON payload' },
  invalid_request: { agentrelay: -32600, a2a: -32600, message: 'Request payload validation error' },
  method_not_found: { agentrelay: -32601, a2a: -32601, message: 'Method not found' },
  invalid_params: { agentrelay: -32602, a2a: -32602, message: 'Invalid parameters', a2aReason: 'INVALID_PARAMS' },
  internal_error: { agentrelay: -32603, a2a: -32603, message: 'Internal error', httpStatus: 500 },
  unauthenticated: { agentrelay: -32000, a2a: -32000, message: 'Missing or invalid API key', httpStatus: 401 },
  payload_too_large: { agentrelay: -32600, a2a: -32600, message: 'Request body exceeds 1 MiB', httpStatus: 413 },
  unsupported_media_type: {
    agentrelay: -32600,
    a2a: -32005,
    message: 'Content-Type must be application/json',
    httpStatus: 415,
    a2aReason: 'CONTENT_TYPE_NOT_SUPPORTED',
  },
  content_type_not_supported: {
    agentrelay: -32017,
    a2a: -32005,
    message: 'Incompatible content types',
    a2aReason: 'CONTENT_TYPE_NOT_SUPPORTED',
  },
  rate_limited: { agentrelay: -32003, a2a: -32003, message: 'Rate limit exceeded', httpStatus: 429 },
  recipient_not_found: { agentrelay: -32004, a2a: -32602, message: 'No agent with the given recipient handle', a2aReason: 'INVALID_PARAMS' },
  not_a_participant: { agentrelay: -32005, a2a: -32001, message: 'You are not a participant of this task', a2aReason: 'TASK_NOT_FOUND' },
  thread_not_found: { agentrelay: -32006, a2a: -32001, message: 'Task not found', a2aReason: 'TASK_NOT_FOUND' },
  thread_terminal: { agentrelay: -32007, a2a: -32004, message: 'The task is in a terminal state', a2aReason: 'UNSUPPORTED_OPERATION' },
  invalid_transition: { agentrelay: -32008, a2a: -32004, message: 'Transition not valid from the current state', a2aReason: 'UNSUPPORTED_OPERATION' },
  not_authorized_transition: { agentrelay: -32009, a2a: -32004, message: 'Caller cannot perform this transition', a2aReason: 'UNSUPPORTED_OPERATION' },
  state_changed: { agentrelay: -32010, a2a: -32004, message: 'Another caller changed the state first', a2aReason: 'UNSUPPORTED_OPERATION' },
  duplicate_idempotency_key: { agentrelay: -32011, a2a: -32602, message: 'Idempotency key reused with a different payload', a2aReason: 'INVALID_PARAMS' },
  invalid_intent_payload: { agentrelay: -32012, a2a: -32602, message: 'proposed_action does not match intent', a2aReason: 'INVALID_PARAMS' },
  teammate_blocked: { agentrelay: -32013, a2a: -32013, message: 'The recipient does not admit this sender', a2aReason: 'ADMISSION_DENIED' },
  thread_message_limit: { agentrelay: -32014, a2a: -32004, message: 'The task holds the maximum of 500 messages', a2aReason: 'UNSUPPORTED_OPERATION' },
  task_not_cancelable: { agentrelay: -32008, a2a: -32002, message: 'Task cannot be canceled', a2aReason: 'TASK_NOT_CANCELABLE' },
  unsupported_operation: { agentrelay: -32004, a2a: -32004, message: 'This operation is not supported', a2aReason: 'UNSUPPORTED_OPERATION' },
  push_notification_not_supported: {
    agentrelay: -32003,
    a2a: -32003,
    message: 'Push Notification is not supported',
    a2aReason: 'PUSH_NOTIFICATION_NOT_SUPPORTED',
  },
  version_not_supported: {
    agentrelay: -32009,
    a2a: -32009,
    message: 'The requested A2A protocol version is not supported',
    a2aReason: 'VERSION_NOT_SUPPORTED',
  },
  context_limit_reached: { agentrelay: -32015, a2a: -32004, message: 'The context holds the maximum of 100 tasks', a2aReason: 'UNSUPPORTED_OPERATION' },
  blocking_timeout: {
    agentrelay: -32016,
    a2a: -32016,
    message: 'The task did not reach a terminal or input-required state before the server deadline',
    a2aReason: 'DEADLINE_EXCEEDED',
  },
  service_unavailable: { agentrelay: -32050, a2a: -32050, message: 'A relay service is unavailable (no responders)', httpStatus: 503 },
  service_timeout: { agentrelay: -32051, a2a: -32051, message: 'A relay service did not answer in time', httpStatus: 504 },
  overloaded: { agentrelay: -32052, a2a: -32052, message: 'A relay service has too much work in flight; retry after Retry-After seconds', httpStatus: 503 },
  handle_taken: { agentrelay: -32020, a2a: -32020, message: 'That handle is already registered', httpStatus: 409 },
  agent_not_found: { agentrelay: -32021, a2a: -32021, message: 'No agent with that handle', httpStatus: 404 },
  key_not_found: { agentrelay: -32022, a2a: -32022, message: 'No active key with that prefix', httpStatus: 404 },
  delivery_not_found: { agentrelay: -32023, a2a: -32023, message: 'No delivery with that id', httpStatus: 404 },
  push_config_not_found: { agentrelay: -32024, a2a: -32001, message: 'Push notification config not found', a2aReason: 'TASK_NOT_FOUND' },
  push_config_limit: { agentrelay: -32025, a2a: -32602, message: 'You hold at most 10 push notification configs on a task', a2aReason: 'INVALID_PARAMS' },
  events_expired: {
    agentrelay: -32026,
    a2a: -32602,
    message: 'Last-Event-ID is older than the events this relay keeps; read the task again and subscribe without it',
    a2aReason: 'INVALID_PARAMS',
  },
  agent_disabled: { agentrelay: -32030, a2a: -32030, message: 'The agent is disabled', httpStatus: 409 },
  csrf_failed: { agentrelay: -32031, a2a: -32031, message: 'Missing or wrong X-CSRF-Token for this console session', httpStatus: 403 },
  role_forbidden: { agentrelay: -32033, a2a: -32033, message: 'Your console role may not do this', httpStatus: 403 },
  task_not_found: { agentrelay: -32032, a2a: -32001, message: 'No task with that id', httpStatus: 404, a2aReason: 'TASK_NOT_FOUND' },
  not_held: { agentrelay: -32034, a2a: -32034, message: 'The task is not held for approval', httpStatus: 409 },
  four_eyes: {
    agentrelay: -32035,
    a2a: -32035,
    message: 'Four eyes: the approver must be a signed-in person who does not own the sending agent',
    httpStatus: 403,
  },
  tool_prompt_not_found: { agentrelay: -32037, a2a: -32037, message: 'No tool prompt with that request id on the task', httpStatus: 404 },
  tool_prompt_closed: {
    agentrelay: -32038,
    a2a: -32038,
    message: 'The tool prompt is closed: answered already, past its deadline, or its task ended',
    httpStatus: 409,
  },
  not_for_approvers: {
    agentrelay: -32039,
    a2a: -32039,
    message: "The handoff's sender answers its tool prompts: no tool-prompt rule of its recipient's trust policy matched it",
    httpStatus: 409,
  },
  chain_depth_exceeded: { agentrelay: -32040, a2a: -32040, message: 'The handoff would sit deeper in its chain than the relay allows' },
  chain_cycle: { agentrelay: -32041, a2a: -32041, message: 'The handoff would hand work back to an agent already on its chain' },
  chain_budget_exhausted: { agentrelay: -32042, a2a: -32042, message: "The handoff's chain has used its budget of handoffs or time" },
  pair_rate_limited: { agentrelay: -32043, a2a: -32043, message: 'Too many handoffs from this sender to this recipient in the last minute', httpStatus: 429 },
  org_not_found: { agentrelay: -32044, a2a: -32044, message: 'No org with that name', httpStatus: 404 },
  org_exists: { agentrelay: -32045, a2a: -32045, message: 'That org already exists', httpStatus: 409 },
  org_quota_exceeded: { agentrelay: -32046, a2a: -32046, message: 'The org is at one of its quotas', httpStatus: 409 },
  tenant_taken: { agentrelay: -32048, a2a: -32048, message: "That tenant is another org's", httpStatus: 409 },
  no_pending_change: { agentrelay: -32036, a2a: -32036, message: "The upstream agent's card has no change waiting for review", httpStatus: 409 },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorSymbol = keyof typeof ERROR_CATALOGUE;

/** The error object that travels inside an RpcException and in `error.data` on the wire. */
export interface RelayErrorBody {
  readonly reason: ErrorSymbol;
  readonly message: string;
  readonly data?: Record<string, unknown>;
}

/** A field the admin API refused, with the words of every check it failed (`skills.0` for nested fields). */
export interface FieldError {
  field: string;
  messages: string[];
}

/** The admin API's error body: `{error: {reason, message, fields?, data?}}`. */
export interface AdminErrorBody {
  error: { reason: string; message: string; fields?: FieldError[]; data?: Record<string, unknown> };
}

export function isErrorSymbol(value: unknown): value is ErrorSymbol {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CATALOGUE, value);
}

export function isRelayErrorBody(value: unknown): value is RelayErrorBody {
  return typeof value === 'object' && value !== null && isErrorSymbol((value as { reason?: unknown }).reason);
}

/** A domain error raised anywhere in the relay; services send it over NATS, the edge maps it. */
export class RelayError extends Error {
  constructor(
    readonly reason: ErrorSymbol,
    message?: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message ?? ERROR_CATALOGUE[reason].message);
    this.name = 'RelayError';
  }

  toBody(): RelayErrorBody {
    return { reason: this.reason, message: this.message, ...(this.data ? { data: this.data } : {}) };
  }

  static fromBody(body: RelayErrorBody): RelayError {
    return new RelayError(body.reason, body.message, body.data);
  }
}

/** The `invalid_params` error of one field: "`field` `problem`", the field as the client wrote it. */
export function invalidParams(field: string, problem: string): RelayError {
  return new RelayError('invalid_params', `${field} ${problem}`, { field });
}

export function jsonRpcCode(reason: ErrorSymbol, dialect: DialectKind): number {
  return ERROR_CATALOGUE[reason][dialect];
}

export function httpStatusOf(reason: ErrorSymbol): number {
  const spec: ErrorSpec = ERROR_CATALOGUE[reason];
  return spec.httpStatus ?? 200;
}

/** The wait a client is asked for when a relay service or its database is unavailable. */
export const SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS = 2;

/** The wait a client is asked for when a relay service sheds its request (too much work in flight). */
export const OVERLOADED_RETRY_AFTER_SECONDS = 1;

/**
 * The `Retry-After` (seconds) of an error the client should retry: the delay the error carries
 * (`data.retry_after_seconds`), or a short default when a service is unavailable or overloaded.
 */
export function retryAfterSeconds(error: RelayError): number | undefined {
  const carried = error.data?.retry_after_seconds;
  if (typeof carried === 'number' && Number.isFinite(carried) && carried >= 0) return Math.ceil(carried);
  if (error.reason === 'overloaded') return OVERLOADED_RETRY_AFTER_SECONDS;
  return error.reason === 'service_unavailable' ? SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS : undefined;
}
