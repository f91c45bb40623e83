import { RelayError } from '@app/contracts';
import { parseListParams } from './params';
import { objectBody, optionalObjectBody, queryParams, taskTarget } from './rest-params';

describe('HTTP+JSON requests as params', () => {
  it('reads ListTasks query strings through the same parser as JSON-RPC params', () => {
    const params = parseListParams(
      queryParams({ pageSize: '5', status: 'TASK_STATE_WORKING', include_artifacts: 'true', historyLength: '2', statusTimestampAfter: '2026-01-01T00:00:00Z' }),
    );
    expect(params).toEqual({
      pageSize: 5,
      status: 'accepted',
      includeArtifacts: true,
      historyLength: 2,
      statusTimestampAfter: '2026-01-01T00:00:00.000Z',
    });
  });

  it('refuses a boolean that is not true or false, and a field given twice', () => {
    expect(() => queryParams({ includeArtifacts: 'yes' })).toThrow(expect.objectContaining({ reason: 'invalid_params', data: { field: 'includeArtifacts' } }));
    expect(() => queryParams({ pageSize: ['1', '2'] })).toThrow(RelayError);
  });

  it('takes an object body, and an absent one where the body is optional', () => {
    expect(objectBody({ message: {} })).toEqual({ message: {} });
    expect(() => objectBody([1])).toThrow(expect.objectContaining({ reason: 'invalid_params', data: { field: 'body' } }));
    expect(() => objectBody(undefined)).toThrow(RelayError);
    expect(optionalObjectBody(undefined)).toEqual({});
  });

  it('splits a task segment and its verb at the last colon', () => {
    expect(taskTarget('01HX:cancel')).toEqual({ id: '01HX', verb: 'cancel' });
    expect(taskTarget('01HX')).toEqual({ id: '01HX' });
  });
});
