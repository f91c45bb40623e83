import type { TaskState } from './task-vocabulary';

/**
 * The states in which a handoff counts against its sender's org's open-handoffs quota
 * (docs/orgs.md#quotas): every state a handoff can still leave. A held handoff counts too: it
 * waits on the relay and its approvers as much as a pending one waits on its recipient.
 */
export const OPEN_HANDOFF_STATES: readonly TaskState[] = ['pending', 'accepted', 'input_required', 'held'];

/** The org whose quota a sender's handoffs count against: the org its handle names. */
export function orgOfHandle(handle: string): string {
  return handle.slice(handle.lastIndexOf('@') + 1);
}

export interface OpenHandoffsRefusal {
  org: string;
  quota: 'open_handoffs';
  limit: number;
}

/**
 * Whether a new handoff of `sender` may be created while `open` handoffs of the sender's org are
 * open (`open` may be counted only up to `limit`); null when it may, else what the refusal names.
 * No limit (null or undefined): every create may.
 */
export function decideOpenHandoffs(sender: string, limit: number | null | undefined, open: number): OpenHandoffsRefusal | null {
  if (limit === null || limit === undefined) return null;
  return open >= limit ? { org: orgOfHandle(sender), quota: 'open_handoffs', limit } : null;
}

export interface StoredBytesRefusal {
  org: string;
  quota: 'stored_bytes';
  limit: number;
}

/**
 * Whether a write of `adding` bytes by an agent of `org` may be stored while the org's agents keep
 * `stored` bytes in handoffs (docs/orgs.md#quotas); null when it may, else what the refusal names.
 * A write that adds nothing (or frees bytes) always may, and so does every write of an org with no
 * limit (null or undefined).
 */
export function decideStoredBytes(org: string, limit: number | null | undefined, stored: number, adding: number): StoredBytesRefusal | null {
  if (limit === null || limit === undefined || adding <= 0) return null;
  return stored + adding > limit ? { org, quota: 'stored_bytes', limit } : null;
}
