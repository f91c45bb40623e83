/** A subject prefix as one token of a stream, bucket or inbox name (`acme.prod` → `acme_prod`). */
export function prefixScope(subjectPrefix: string): string {
  return subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
}

function scoped(base: string, subjectPrefix: string): string {
  const scope = prefixScope(subjectPrefix);
  return scope ? `${base}_${scope}` : base;
}

/** The lease stream of one relay (or test run): named after the subject prefix, so runs never share counters. */
export function rateLimitStreamName(subjectPrefix: string): string {
  return scoped('RATELIMIT', subjectPrefix);
}

/** The stream of one relay's console sessions (one subject per session, its last message the session). */
export function consoleSessionStreamName(subjectPrefix: string): string {
  return scoped('CONSOLE_SESSIONS', subjectPrefix);
}

/** The subjects the rate-limit stream captures, under the prefix. */
export const RATE_LIMIT_SUBJECT_ROOT = 'relay.ratelimit';

/** The subjects the console-session stream captures, under the prefix. */
export const CONSOLE_SESSION_SUBJECT_ROOT = 'relay.console.sessions';
