import { RelayError } from '@app/contracts';
import { decodeCursor, encodeCursor } from './list-cursor';

describe('list cursors', () => {
  it('round-trips both orders', () => {
    const created = { order: 'created' as const, id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' };
    expect(decodeCursor(encodeCursor(created), 'created')).toEqual(created);
    const status = { order: 'status' as const, id: '01HXYZ4K2VNJQP7R8MWDB3CSTF', status_key: '2026-04-25T10:00:00.123456Z' };
    expect(decodeCursor(encodeCursor(status), 'status')).toEqual(status);
  });

  it('refuses garbage and a cursor of the other order', () => {
    expect(() => decodeCursor('not-a-cursor', 'created')).toThrow(RelayError);
    expect(() => decodeCursor(encodeCursor({ order: 'created', id: '01HXYZ4K2VNJQP7R8MWDB3CSTF' }), 'status')).toThrow(RelayError);
  });

  it('refuses a status key Postgres would not read as the timestamp the list wrote', () => {
    const forged = (statusKey: unknown): string => Buffer.from(JSON.stringify(['status', '01HXYZ4K2VNJQP7R8MWDB3CSTF', statusKey])).toString('base64url');
    for (const statusKey of [
      '1',
      '99999',
      'Tue, 1 Jan 2030',
      '2026-02-31T00:00:00.000000Z',
      '2026-04-25T10:00:00.123456Z\u0000',
      '+275760-09-13T00:00:00.000000Z',
    ]) {
      expect(() => decodeCursor(forged(statusKey), 'status')).toThrow(RelayError);
    }
  });
});
