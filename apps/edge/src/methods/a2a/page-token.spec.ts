import { RelayError, TASK_LIMITS } from '@app/contracts';
import { decodePageToken, encodePageToken } from './page-token';

describe('ListTasks page token', () => {
  it('carries the cursor and the first page total', () => {
    const token = encodePageToken({ cursor: 'abc|01H', total: 7 });
    expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodePageToken(token)).toEqual({ cursor: 'abc|01H', total: 7 });
  });

  it.each([
    '',
    'not-a-token',
    Buffer.from('{"c":1,"t":2}').toString('base64url'),
    Buffer.from('{"c":"x","t":-1}').toString('base64url'),
    encodePageToken({ cursor: 'c'.repeat(TASK_LIMITS.listCursorChars + 1), total: 1 }),
  ])('rejects %p naming pageToken', (value) => {
    try {
      decodePageToken(value);
      throw new Error('expected a throw');
    } catch (error) {
      expect(error).toBeInstanceOf(RelayError);
      expect(error).toMatchObject({ reason: 'invalid_params', data: { field: 'pageToken' } });
    }
  });
});
