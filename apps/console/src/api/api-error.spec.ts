import { describe, expect, it } from '@jest/globals';
import { ApiError } from './api-error';

const answer = (status: number, body: unknown): Response =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

describe('an admin API error', () => {
  it('keeps the reason, message, data and fields of the error body', async () => {
    const error = await ApiError.from(
      answer(400, {
        error: { reason: 'invalid_params', message: 'Invalid YAML', fields: [{ field: 'body', messages: ['bad'] }], data: { line: 3, column: 5 } },
      }),
    );
    expect(error).toMatchObject({ status: 400, reason: 'invalid_params', message: 'Invalid YAML', fields: [{ field: 'body', messages: ['bad'] }] });
    expect(error.place).toEqual({ line: 3, column: 5 });
  });

  it('has no place when the API named none, and column 1 when it named only a line', async () => {
    expect((await ApiError.from(answer(400, { error: { reason: 'invalid_params', message: 'x' } }))).place).toBeNull();
    expect((await ApiError.from(answer(400, { error: { reason: 'invalid_params', message: 'x', data: { line: 2 } } }))).place).toEqual({ line: 2, column: 1 });
  });

  it('says the HTTP status when the body is not the error shape', async () => {
    const error = await ApiError.from(new Response('<html>bad gateway</html>', { status: 502, statusText: 'Bad Gateway' }));
    expect(error).toMatchObject({ status: 502, reason: 'http_error', message: '502 Bad Gateway' });
  });
});
