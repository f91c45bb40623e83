/** Socket errors of a connection to the database server that could not be made or was lost. */
const SOCKET_ERROR_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);

/**
 * SQLSTATEs that say the server, not the statement, is the problem: the connection-exception
 * class (08), operator intervention (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot
 * connect now) and too many connections (53300).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** What the pg driver and TypeORM say when a connection is lost or cannot be had. */
const UNAVAILABLE_MESSAGES = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /not currently accepting connections/i,
  /client has encountered a connection error and is not queryable/i,
  /cannot use a pool after calling end/i,
  /driver not connected/i,
];

interface ErrorLike {
  code?: unknown;
  severity?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
  errors?: unknown;
}

function isUnavailableError(error: ErrorLike): boolean {
  const code = typeof error.code === 'string' ? error.code : '';
  if (SOCKET_ERROR_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code)) return true;
  // A FATAL or PANIC error from the server ends the session: the database refused or dropped us.
  if (error.severity === 'FATAL' || error.severity === 'PANIC') return true;
  const message = typeof error.message === 'string' ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * Whether an error means the database could not be reached (refused, shut down, connection lost,
 * connections not allowed) rather than that a statement failed. Looks through TypeORM's
 * `driverError`, `cause` chains and the errors of an AggregateError (one per address tried).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const seen = new Set<unknown>();
  const pending: unknown[] = [error];
  while (pending.length > 0) {
    const current = pending.pop();
    if (typeof current !== 'object' || current === null || seen.has(current)) continue;
    seen.add(current);
    const candidate = current as ErrorLike;
    if (isUnavailableError(candidate)) return true;
    pending.push(candidate.driverError, candidate.cause);
    if (Array.isArray(candidate.errors)) pending.push(...(candidate.errors as unknown[]));
  }
  return false;
}

/** Whether Postgres cancelled a statement (SQLSTATE 57014: the statement timeout, or a cancel request); its transaction rolled back. */
export function isStatementCancelled(error: unknown): boolean {
  const candidate = error as ErrorLike | null;
  if (typeof candidate !== 'object' || candidate === null) return false;
  return candidate.code === '57014' || (typeof candidate.driverError === 'object' && (candidate.driverError as ErrorLike | null)?.code === '57014');
}

/**
 * SQLSTATEs of a value the schema refuses: a CHECK (23514) or NOT NULL (23502) constraint, a
 * string longer than its column (22001), a number out of its type's range (22003), text that is
 * not of the column's type (22P02). The statement rolled back; nothing was written.
 */
const REFUSED_VALUE_SQLSTATES = new Set(['23514', '23502', '22001', '22003', '22P02']);

/** The constraint or column a refused value broke, when the error is one: the schema's own rules, the last line behind the edge's. */
export function refusedValue(error: unknown): { constraint?: string; column?: string } | undefined {
  const candidate = error as (ErrorLike & { constraint?: unknown; column?: unknown }) | null;
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const driver = (typeof candidate.driverError === 'object' && candidate.driverError !== null ? candidate.driverError : candidate) as ErrorLike & {
    constraint?: unknown;
    column?: unknown;
  };
  if (typeof driver.code !== 'string' || !REFUSED_VALUE_SQLSTATES.has(driver.code)) return undefined;
  return {
    ...(typeof driver.constraint === 'string' ? { constraint: driver.constraint } : {}),
    ...(typeof driver.column === 'string' ? { column: driver.column } : {}),
  };
}
