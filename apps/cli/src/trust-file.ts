import { Document } from 'yaml';
import type { TrustPolicy } from '@app/contracts';

/** The lists of a trust policy as the admin API has them: everything but whose it is and when it changed. */
type TrustLists = Omit<TrustPolicy, 'handle' | 'updated_at'>;

/**
 * What each list holds, in the words of a refusal. `satisfies` makes a list the admin API adds and
 * this table lacks a compile error, so `trust apply` cannot stop guarding it unnoticed.
 */
export const TRUST_LISTS = {
  allow: 'allowed senders',
  block: 'blocked senders',
  hold: 'hold rules',
  tool_prompts: 'tool-prompt rules',
  chain: 'chain bounds',
} as const satisfies Record<keyof TrustLists, string>;

type TrustList = keyof typeof TRUST_LISTS;

/**
 * A policy as the `trust.yaml` file `trust apply` reads back: `agent` and every other field of the
 * policy the relay answered (the fields are spread, not picked, so a new one is printed too).
 */
export function trustYaml(policy: TrustPolicy): string {
  const { handle, updated_at: updatedAt, ...lists } = policy;
  const document = new Document({ agent: handle, ...lists });
  document.commentBefore = ` The trust policy of ${handle}, ${updatedAt ? `changed ${updatedAt}` : 'never set (the default: teammates only)'}.`;
  return document.toString();
}

function describeEntry(entry: unknown): string {
  if (typeof entry === 'string') return entry;
  const name = (entry as { name?: unknown } | null)?.name;
  return typeof name === 'string' ? JSON.stringify(name) : JSON.stringify(entry);
}

/**
 * The lists `document` leaves out that the stored policy has entries in: applying it would empty
 * them (the relay replaces the whole policy). An empty list (`hold: []`) says so on purpose.
 */
export function listsItWouldDrop(document: Record<string, unknown>, stored: TrustPolicy): string[] {
  return (Object.keys(TRUST_LISTS) as TrustList[])
    .map((list) => [list, entriesOf(stored[list])] as const)
    .filter(([list, entries]) => document[list] === undefined && entries.length > 0)
    .map(([list, entries]) => `${list}: ${entries.length} ${TRUST_LISTS[list]} (${entries.map((entry) => describeEntry(entry)).join(', ')})`);
}

/** A list's entries, or an object's settings as `key: value` (the chain bounds). */
function entriesOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).map(([key, setting]) => `${key}: ${JSON.stringify(setting)}`);
}
