import { AGENT_LIMITS } from '../limits';

/**
 * Agent handles are `name@org`, lowercase: letters, digits and `.`, `_`, `-` (not first) in the
 * name; letters, digits, `.` and `-` (not first) in the org. The same rule is a CHECK in the
 * directory schema.
 */
export const HANDLE_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9.-]{0,126}$/;

/** A trust-policy entry: an exact handle, or `*@org` for a whole organisation. */
export const TRUST_PATTERN = /^(\*|[a-z0-9][a-z0-9._-]{0,127})@[a-z0-9][a-z0-9.-]{0,126}$/;

/** API keys: `ah_live_` + 32 characters of RFC 4648 base32 (160 random bits). */
export const API_KEY_PATTERN = /^ah_live_[A-Z2-7]{32}$/;
export const API_KEY_PREFIX = 'ah_live_';
/** The display prefix stored next to a key's hash: `ah_live_` and the key's first 8 characters. */
export const API_KEY_DISPLAY_PREFIX_PATTERN = /^ah_live_[A-Z2-7]{8}$/;

export function isValidHandle(value: unknown): value is string {
  return typeof value === 'string' && value.length <= AGENT_LIMITS.handleChars && HANDLE_PATTERN.test(value);
}

/** The organisation of a handle: the part after `@`. */
export function orgOf(handle: string): string {
  return handle.slice(handle.lastIndexOf('@') + 1);
}

/** Lowercases and trims a handle-like input, leaving other values alone (for validation to reject). */
export function normalizeHandle(value: unknown): unknown {
  return typeof value === 'string' ? value.trim().toLowerCase() : value;
}

/** Whether a trust entry (`alice@acme` or `*@acme`) names `handle`. */
export function trustEntryMatches(entry: string, handle: string): boolean {
  if (entry.startsWith('*@')) return orgOf(handle) === entry.slice(2);
  return entry === handle;
}
