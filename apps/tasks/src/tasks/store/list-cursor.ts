import { RelayError, type ListOrder } from '@app/contracts';

/** The keyset position after the last item of a page: opaque to clients. */
export interface ListCursor {
  order: ListOrder;
  /** Microsecond timestamp text of the last item's status change (order `status`). */
  status_key?: string;
  id: string;
}

export function encodeCursor(cursor: ListCursor): string {
  return Buffer.from(JSON.stringify([cursor.order, cursor.id, cursor.status_key ?? null]), 'utf8').toString('base64url');
}

/** Exactly the UTC microsecond text the list writes (`2026-04-25T10:00:00.123456Z`), of a real date. */
function isStatusKey(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(value)) return false;
  const time = Date.parse(value);
  return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 23) === value.slice(0, 23);
}

export function decodeCursor(value: string, order: ListOrder): ListCursor {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded[0] === order && typeof decoded[1] === 'string' && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(decoded[1])) {
      const statusKey = decoded[2];
      if (order === 'created') return { order, id: decoded[1] };
      if (typeof statusKey === 'string' && isStatusKey(statusKey)) return { order, id: decoded[1], status_key: statusKey };
    }
  } catch {
    // fall through
  }
  throw new RelayError('invalid_params', 'cursor is not a cursor this list returned', { field: 'cursor' });
}
