import { ERROR_CATALOGUE, RelayError, httpStatusOf, isRelayErrorBody, jsonRpcCode, type ErrorSymbol } from './errors';

describe('error catalogue', () => {
  it('maps the AgentRelay error symbols to their codes', () => {
    const expected: Partial<Record<ErrorSymbol, number>> = {
      invalid_params: -32602,
      rate_limited: -32003,
      recipient_not_found: -32004,
      not_a_participant: -32005,
      thread_not_found: -32006,
      thread_terminal: -32007,
      invalid_transition: -32008,
      not_authorized_transition: -32009,
      state_changed: -32010,
      duplicate_idempotency_key: -32011,
      invalid_intent_payload: -32012,
      teammate_blocked: -32013,
    };
    for (const [symbol, code] of Object.entries(expected)) {
      expect(jsonRpcCode(symbol as ErrorSymbol, 'agentrelay')).toBe(code);
    }
  });

  it('never reveals in the A2A dialect whether a thread exists', () => {
    expect(jsonRpcCode('thread_not_found', 'a2a')).toBe(-32001);
    expect(jsonRpcCode('not_a_participant', 'a2a')).toBe(-32001);
  });

  it('maps A2A-specific errors to the A2A codes', () => {
    expect(jsonRpcCode('task_not_cancelable', 'a2a')).toBe(-32002);
    expect(jsonRpcCode('thread_terminal', 'a2a')).toBe(-32004);
    expect(jsonRpcCode('version_not_supported', 'a2a')).toBe(-32009);
  });

  it('gives every symbol a code in both dialects and a message', () => {
    for (const [symbol, spec] of Object.entries(ERROR_CATALOGUE)) {
      expect(Number.isInteger(spec.agentrelay)).toBe(true);
      expect(Number.isInteger(spec.a2a)).toBe(true);
      expect(spec.message.length).toBeGreaterThan(0);
      expect(symbol).toMatch(/^[a-z_]+$/);
    }
  });

  it('answers transport-level errors with their HTTP status and others with 200', () => {
    expect(httpStatusOf('unauthenticated')).toBe(401);
    expect(httpStatusOf('rate_limited')).toBe(429);
    expect(httpStatusOf('payload_too_large')).toBe(413);
    expect(httpStatusOf('thread_not_found')).toBe(200);
  });

  it('round-trips a RelayError through its wire body', () => {
    const error = new RelayError('state_changed', 'lost the race', { task_id: 't1' });
    const body = error.toBody();
    expect(isRelayErrorBody(body)).toBe(true);
    const back = RelayError.fromBody(body);
    expect(back).toBeInstanceOf(RelayError);
    expect(back.reason).toBe('state_changed');
    expect(back.data).toEqual({ task_id: 't1' });
    expect(isRelayErrorBody({ reason: 'nope', message: 'x' })).toBe(false);
  });
});
