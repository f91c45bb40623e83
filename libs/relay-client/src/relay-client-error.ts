/** How a call to the relay failed. */
export type RelayFailure =
  /** The relay answered with a JSON-RPC error; `reason` is its error symbol (e.g. `thread_terminal`). */
  | 'relay_error'
  /** The relay could not be reached (connection refused, DNS, reset). */
  | 'unreachable'
  /** The relay answered something that is not a JSON-RPC response. */
  | 'bad_response';

export class RelayClientError extends Error {
  constructor(
    readonly failure: RelayFailure,
    /** The relay's error symbol (`unauthenticated`, `recipient_not_found`, …), or the failure kind. */
    readonly reason: string,
    message: string,
    readonly details: { code?: number; httpStatus?: number; data?: Record<string, unknown>; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'RelayClientError';
  }

  get unauthorized(): boolean {
    return this.reason === 'unauthenticated';
  }

  /** The relay refused the `Last-Event-ID` a stream resumed from (one it no longer reads, e.g. after its stream-id key changed): watch again without it. */
  get refusedResumeId(): boolean {
    return this.reason === 'invalid_params' && this.details.data?.field === 'Last-Event-ID';
  }

  /** Worth retrying unchanged: the relay was unreachable, overloaded or a service timed out. */
  get transient(): boolean {
    return this.failure === 'unreachable' || ['service_unavailable', 'service_timeout', 'overloaded', 'rate_limited'].includes(this.reason);
  }
}

/**
 * What an agent (or a person) should do about a relay error, in one sentence. Tool names and
 * commands are left to the caller; this names the action.
 */
export function adviceFor(error: RelayClientError): string {
  const data = error.details.data ?? {};
  switch (error.reason) {
    case 'unauthenticated':
      return 'The relay refused the API key: check AGENTRELAY_API_KEY (a revoked or mistyped key); ask the relay admin for a new key if needed.';
    case 'recipient_not_found':
      return 'No agent has that handle: check the spelling (name@org) or look the agent up by handle first.';
    case 'teammate_blocked':
      return "The recipient's trust policy does not admit you: ask the recipient (or the relay admin) to allow your handle.";
    case 'thread_not_found':
      return 'There is no thread with that id: check the task id (list your inbox or sent handoffs to find it).';
    case 'not_a_participant':
      return 'You cannot see or change this thread: you did not send it, and it has not been delivered to you (a handoff a hold rule keeps for approval reaches its recipient only once a person approves it).';
    case 'thread_terminal':
      return `The thread is ${typeof data.state === 'string' ? data.state : 'finished'}; start a new handoff instead of replying.`;
    case 'invalid_transition':
      return typeof data.state === 'string'
        ? `The thread is ${data.state}, where ${String(data.transition ?? 'that transition')} is not allowed; read the thread to see where it stands.`
        : "That transition is not allowed from the thread's current state; read the thread to see where it stands.";
    case 'not_authorized_transition':
      return typeof data.required_role === 'string'
        ? `Only the thread's ${data.required_role} can do that.`
        : 'You are not the participant who may do that on this thread.';
    case 'state_changed':
      return 'Someone changed the thread at the same moment: read the thread again and decide from its new state.';
    case 'duplicate_idempotency_key':
      return 'That idempotency key was already used for a different message: use a new key for a new message (reuse a key only to retry the very same call).';
    case 'invalid_intent_payload':
      return 'intent propose_action needs a proposed action (description, target_files, rationale); other intents must not have one.';
    case 'invalid_params':
      return typeof data.field === 'string' ? `Fix the field ${data.field} and try again.` : 'Fix the parameters and try again.';
    case 'thread_message_limit':
      return 'The thread is full: start a new handoff that refers to this one.';
    case 'rate_limited':
      return `Too many requests: wait ${error.details.retryAfterSeconds ?? 'a few'} seconds and try again.`;
    case 'service_unavailable':
    case 'service_timeout':
    case 'overloaded':
      return 'The relay is having trouble right now: try again in a little while (the same idempotency key makes a retried send safe).';
    case 'payload_too_large':
      return 'The request is over 1 MiB: send large diffs as file references or links instead.';
    case 'unreachable':
      return 'Cannot reach the relay: check RELAY_URL and that the relay is running.';
    default:
      return "See the relay's message above.";
  }
}
