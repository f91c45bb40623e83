import { RelayError } from '@app/contracts';
import { renderRestError } from './rest-errors';

describe('renderRestError', () => {
  it.each([
    ['thread_not_found', 404, 'NOT_FOUND', 'TASK_NOT_FOUND'],
    ['not_a_participant', 404, 'NOT_FOUND', 'TASK_NOT_FOUND'],
    ['task_not_cancelable', 409, 'FAILED_PRECONDITION', 'TASK_NOT_CANCELABLE'],
    ['unsupported_operation', 400, 'UNIMPLEMENTED', 'UNSUPPORTED_OPERATION'],
    ['unsupported_media_type', 415, 'INVALID_ARGUMENT', 'CONTENT_TYPE_NOT_SUPPORTED'],
    ['version_not_supported', 400, 'UNIMPLEMENTED', 'VERSION_NOT_SUPPORTED'],
    ['push_notification_not_supported', 400, 'UNIMPLEMENTED', 'PUSH_NOTIFICATION_NOT_SUPPORTED'],
    ['parse_error', 400, 'INVALID_ARGUMENT', 'PARSE_ERROR'],
    ['unauthenticated', 401, 'UNAUTHENTICATED', 'UNAUTHENTICATED'],
    ['teammate_blocked', 403, 'PERMISSION_DENIED', 'ADMISSION_DENIED'],
    ['rate_limited', 429, 'RESOURCE_EXHAUSTED', 'RATE_LIMITED'],
    ['blocking_timeout', 504, 'DEADLINE_EXCEEDED', 'DEADLINE_EXCEEDED'],
    ['service_unavailable', 503, 'UNAVAILABLE', 'SERVICE_UNAVAILABLE'],
    ['internal_error', 500, 'INTERNAL', 'INTERNAL_ERROR'],
  ] as const)('renders %s as HTTP %i %s with ErrorInfo %s', (reason, status, name, infoReason) => {
    const rendered = renderRestError(new RelayError(reason, 'something happened'));
    expect(rendered.status).toBe(status);
    expect(rendered.body.error).toMatchObject({ code: status, status: name, details: [{ reason: infoReason, domain: 'a2a-protocol.org' }] });
  });

  it('tells a stranger only "Task not found", without the details of the refusal', () => {
    const rendered = renderRestError(new RelayError('not_a_participant', 'You are not a participant of this task', { task_id: 'T1' }));
    expect(rendered.body.error.message).toBe('Task not found');
    expect(rendered.body.error.details[0].metadata).toEqual({ relay_reason: 'thread_not_found', relay_code: '-32001' });
  });

  it('names the field of invalid params in ErrorInfo metadata and a google.rpc.BadRequest', () => {
    const rendered = renderRestError(new RelayError('invalid_params', 'pageSize must be an integer from 0 to 100', { field: 'pageSize' }));
    expect(rendered.status).toBe(400);
    expect(rendered.body.error.details).toEqual([
      expect.objectContaining({ reason: 'INVALID_PARAMS', metadata: expect.objectContaining({ field: 'pageSize' }) }),
      {
        '@type': 'type.googleapis.com/google.rpc.BadRequest',
        fieldViolations: [{ field: 'pageSize', description: 'pageSize must be an integer from 0 to 100' }],
      },
    ]);
  });
});
