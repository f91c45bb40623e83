import { RelayError } from '@app/contracts';
import { asRelayError, renderRelayError } from './json-rpc-errors';

describe('one rendering of relay errors per dialect', () => {
  const notFound = new RelayError('thread_not_found', 'Task not found', { task_id: 'T1' });

  it('renders AgentRelay errors with the AgentRelay code and data.reason', () => {
    expect(renderRelayError(notFound, { kind: 'agentrelay' })).toEqual({
      status: 200,
      error: { code: -32006, message: 'Task not found', data: { reason: 'thread_not_found', task_id: 'T1' } },
    });
    const invalid = new RelayError('invalid_params', 'recipient is required', { field: 'recipient' });
    expect(renderRelayError(invalid, { kind: 'agentrelay' }).error.data).toEqual({ reason: 'invalid_params', field: 'recipient' });
  });

  it('renders A2A v0.3 errors with the A2A code', () => {
    const conflict = new RelayError('state_changed', 'Another caller changed the state first', { task_id: 'T1' });
    expect(renderRelayError(conflict, { kind: 'a2a', version: '0.3' }).error).toEqual({
      code: -32004,
      message: 'Another caller changed the state first',
      data: { reason: 'state_changed', task_id: 'T1' },
    });
    expect(renderRelayError(notFound, { kind: 'a2a', version: '0.3' }).error).toEqual({
      code: -32001,
      message: 'Task not found',
      data: { reason: 'thread_not_found' },
    });
  });

  it('renders "not a participant" and "not found" identically in both A2A dialects', () => {
    const outsider = new RelayError('not_a_participant', 'You are not a participant of this task', { task_id: 'T2' });
    for (const dialect of [
      { kind: 'a2a', version: '0.3' },
      { kind: 'a2a', version: '1.0' },
    ] as const) {
      expect(JSON.stringify(renderRelayError(outsider, dialect))).toBe(JSON.stringify(renderRelayError(notFound, dialect)));
    }
    expect(renderRelayError(outsider, { kind: 'agentrelay' }).error.code).toBe(-32005);
  });

  it('renders A2A v1.0 errors as google.rpc.ErrorInfo', () => {
    expect(renderRelayError(notFound, { kind: 'a2a', version: '1.0' }).error).toEqual({
      code: -32001,
      message: 'Task not found',
      data: [
        {
          '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
          reason: 'TASK_NOT_FOUND',
          domain: 'a2a-protocol.org',
          metadata: { relay_reason: 'thread_not_found' },
        },
      ],
    });
  });

  it('takes the HTTP status from the catalogue', () => {
    expect(renderRelayError(new RelayError('rate_limited'), { kind: 'agentrelay' }).status).toBe(429);
    expect(renderRelayError(new RelayError('payload_too_large'), { kind: 'agentrelay' }).status).toBe(413);
    expect(renderRelayError(new RelayError('unauthenticated'), { kind: 'a2a', version: '1.0' }).status).toBe(401);
  });

  it('hides unknown errors behind an error id', () => {
    const error = asRelayError(new Error('secret database detail'));
    expect(error.reason).toBe('internal_error');
    expect(error.message).not.toContain('secret');
    expect(error.data).toEqual({ error_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
  });
});
