import { isDatabaseUnavailable, refusedValue } from './database-unavailable';

function pgError(code: string, severity = 'ERROR', message = 'error'): Error {
  return Object.assign(new Error(message), { code, severity });
}

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    ['an AggregateError of refused addresses', new AggregateError([Object.assign(new Error('refused'), { code: 'ECONNREFUSED' })], 'connect failed')],
    ['admin shutdown (57P01)', pgError('57P01', 'FATAL', 'terminating connection due to administrator command')],
    ['cannot connect now (57P03)', pgError('57P03', 'FATAL', 'the database system is starting up')],
    ['the connection-exception class (08006)', pgError('08006')],
    ['connections not allowed (FATAL 55000)', pgError('55000', 'FATAL', 'database "x" is not currently accepting connections')],
    ['a lost connection', new Error('Connection terminated unexpectedly')],
    ['a connect timeout', new Error('timeout exceeded when trying to connect')],
    ['TypeORM wrapping a driver error', Object.assign(new Error('query failed'), { driverError: pgError('57P01', 'FATAL') })],
    ['a cause chain', new Error('outer', { cause: pgError('08001') })],
  ])('recognises %s', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', pgError('23505')],
    ['a check violation', pgError('23514')],
    ['a lock timeout (55P03)', pgError('55P03')],
    ['a plain bug', new TypeError('x is undefined')],
    ['a non-error', 'ECONNREFUSED'],
  ])('does not mistake %s for an outage', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});

describe('refusedValue', () => {
  it("names the constraint a CHECK violation broke, through TypeORM's driverError too", () => {
    const check = Object.assign(pgError('23514'), { constraint: 'push_configs_url_http' });
    expect(refusedValue(check)).toEqual({ constraint: 'push_configs_url_http' });
    expect(refusedValue(Object.assign(new Error('query failed'), { driverError: check }))).toEqual({ constraint: 'push_configs_url_http' });
  });

  it('recognises a NOT NULL column, an over-long string and a malformed value', () => {
    expect(refusedValue(Object.assign(pgError('23502'), { column: 'url' }))).toEqual({ column: 'url' });
    expect(refusedValue(pgError('22001'))).toEqual({});
    expect(refusedValue(pgError('22P02'))).toEqual({});
  });

  it('leaves alone what is not a refused value: a unique violation, an outage, a bug', () => {
    expect(refusedValue(pgError('23505'))).toBeUndefined();
    expect(refusedValue(pgError('57P01', 'FATAL'))).toBeUndefined();
    expect(refusedValue(new TypeError('x is undefined'))).toBeUndefined();
    expect(refusedValue(null)).toBeUndefined();
  });
});
