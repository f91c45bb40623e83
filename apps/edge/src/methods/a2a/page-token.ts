import { RelayError, TASK_LIMITS } from '@app/contracts';

/**
 * The A2A ListTasks page token: the tasks service's cursor plus the total size computed on the
 * first page, so later pages carry the same `totalSize` without counting again.
 */
export interface PageToken {
  cursor: string;
  total: number;
}

/** `totalSize` is a proto int32. */
const INT32_MAX = 2_147_483_647;

export function encodePageToken(token: PageToken): string {
  return Buffer.from(JSON.stringify({ c: token.cursor, t: token.total })).toString('base64url');
}

export function decodePageToken(value: string): PageToken {
  try {
    const decoded = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { c?: unknown; t?: unknown };
    const cursor = decoded.c;
    if (
      typeof cursor === 'string' &&
      cursor.length <= TASK_LIMITS.listCursorChars &&
      typeof decoded.t === 'number' &&
      Number.isInteger(decoded.t) &&
      decoded.t >= 0 &&
      decoded.t <= INT32_MAX
    )
      return { cursor, total: decoded.t };
  } catch {
    // fall through: not a token this relay issued
  }
  throw new RelayError('invalid_params', 'pageToken is not a token from a previous ListTasks page', { field: 'pageToken' });
}
