import { isDeepStrictEqual } from 'node:util';
import type { UpstreamCardChange, UpstreamCardField, UpstreamCardSnapshot, UpstreamInterface } from '@app/contracts';
import type { ParsedAgentCard } from './agent-card';

/** Fields whose change takes effect at once: the public profile. Every other field changes where, how or as whom the relay talks to the agent. */
const HARMLESS: ReadonlySet<UpstreamCardField> = new Set(['name', 'description', 'skills']);

/** The fields compared, in the order a diff lists them. */
const COMPARED: readonly UpstreamCardField[] = [
  'url',
  'binding',
  'protocol_version',
  'streaming',
  'push_notifications',
  'security',
  'name',
  'description',
  'skills',
];

export function snapshotOf(card: ParsedAgentCard): UpstreamCardSnapshot {
  return {
    url: card.url,
    binding: card.binding,
    protocol_version: card.protocol_version,
    streaming: card.streaming,
    push_notifications: card.push_notifications,
    security: card.security,
    name: card.name,
    description: card.description,
    skills: card.skills,
  };
}

export interface CardDiff {
  /** Every field that changed. */
  changes: UpstreamCardChange[];
  /** Those that wait for an operator. */
  review: UpstreamCardChange[];
  /** Those that take effect at once. */
  harmless: UpstreamCardChange[];
}

/** What a card read now changed against the accepted one; `review` is set on the changes an operator must accept. */
export function diffCards(accepted: UpstreamCardSnapshot, read: UpstreamCardSnapshot): CardDiff {
  const changes: UpstreamCardChange[] = [];
  for (const field of COMPARED) {
    if (!isDeepStrictEqual(accepted[field], read[field])) changes.push({ field, old: accepted[field], new: read[field], review: !HARMLESS.has(field) });
  }
  return { changes, review: changes.filter((change) => change.review), harmless: changes.filter((change) => !change.review) };
}

/** The accepted snapshot with these changes made. */
export function withChanges(snapshot: UpstreamCardSnapshot, changes: readonly UpstreamCardChange[]): UpstreamCardSnapshot {
  const next: Record<string, unknown> = { ...snapshot };
  for (const change of changes) next[change.field] = change.new;
  return next as unknown as UpstreamCardSnapshot;
}

/** The interface deliveries use, with the card's interface fields of this snapshot. */
export function interfaceOf(current: UpstreamInterface, snapshot: UpstreamCardSnapshot, fetchedAt: string): UpstreamInterface {
  return {
    ...current,
    url: snapshot.url,
    binding: snapshot.binding,
    protocol_version: snapshot.protocol_version,
    streaming: snapshot.streaming,
    push_notifications: snapshot.push_notifications,
    card_fetched_at: fetchedAt,
  };
}
