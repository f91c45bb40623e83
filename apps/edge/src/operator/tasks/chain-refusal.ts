import type { AdminAuditEntry, AdminChainRefusal } from '@app/contracts';

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

/** A `handoff.refuse` audit row as the chain view shows it: the refusal's facts read from its detail, each checked for its type. */
export function chainRefusalOf(entry: AdminAuditEntry): AdminChainRefusal {
  const { detail } = entry;
  return {
    id: entry.id,
    at: entry.at,
    reason: text(detail.reason) ?? 'unknown',
    sender: text(detail.sender) ?? entry.actor.replace(/^agent:/, ''),
    recipient: entry.target,
    limit: typeof detail.limit === 'number' ? detail.limit : null,
    limit_name: text(detail.limit_name),
    path: Array.isArray(detail.path) ? detail.path.filter((handle): handle is string => typeof handle === 'string') : [],
    parent_task_id: text(detail.parent_task_id),
  };
}
