import { RelayError } from '@app/contracts';

export const TASK_ID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const MICROSECOND_KEY = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
/** The Postgres text of a `real` rank (ts_rank), as the search cursor carries it. */
const RANK_KEY = /^[0-9]+(\.[0-9]+)?(e-?[0-9]+)?$/;

function invalidCursor(field = 'cursor'): RelayError {
  return new RelayError('invalid_params', `${field} is not a cursor this list returned`, { field });
}

function encode(parts: string[]): string {
  return Buffer.from(JSON.stringify(parts), 'utf8').toString('base64url');
}

function decode(value: string, tag: string, field: string): string[] {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded[0] === tag && decoded.every((part) => typeof part === 'string')) return decoded.slice(1) as string[];
  } catch {
    // fall through
  }
  throw invalidCursor(field);
}

/** The admin list's keyset position: the last item's creation time (microsecond text) and id. */
export function encodeListCursor(createdKey: string, id: string): string {
  return encode(['a', createdKey, id]);
}

export function decodeListCursor(value: string): { createdKey: string; id: string } {
  const [createdKey, id] = decode(value, 'a', 'cursor');
  if (!MICROSECOND_KEY.test(createdKey ?? '') || !TASK_ID.test(id ?? '')) throw invalidCursor();
  return { createdKey, id };
}

/** A search's keyset position: the last item's rank (as Postgres prints a `real`) and id. */
export function encodeSearchCursor(rankKey: string, id: string): string {
  return encode(['s', rankKey, id]);
}

export function decodeSearchCursor(value: string): { rankKey: string; id: string } {
  const [rankKey, id] = decode(value, 's', 'cursor');
  if (!RANK_KEY.test(rankKey ?? '') || !TASK_ID.test(id ?? '')) throw invalidCursor();
  return { rankKey, id };
}
