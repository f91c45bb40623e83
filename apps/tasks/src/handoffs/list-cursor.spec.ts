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
});
