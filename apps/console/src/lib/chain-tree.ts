import type { AdminTaskRow, LiveTaskEvent, TaskChainView } from '../api/types';

/** One handoff of a chain with the handoffs made for it, oldest first. */
export interface ChainTreeNode {
  task: AdminTaskRow;
  children: ChainTreeNode[];
}

/**
 * A chain's handoffs as a tree from its root: each hangs under its parent, children in the order
 * the relay gave them (by creation). A handoff whose parent is not among them (the relay carries
 * every parent, so this is a guard) starts a tree of its own.
 */
export function chainTree(nodes: readonly AdminTaskRow[]): ChainTreeNode[] {
  const byId = new Map<string, ChainTreeNode>(nodes.map((task) => [task.id, { task, children: [] }]));
  const roots: ChainTreeNode[] = [];
  for (const task of nodes) {
    const node = byId.get(task.id) as ChainTreeNode;
    const parentId = task.chain?.parent_task_id ?? null;
    const parent = parentId !== null && parentId !== task.id ? byId.get(parentId) : undefined;
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

/** What a refusal's reason means, in a person's words. */
const REFUSAL_REASONS: Record<string, string> = {
  chain_depth_exceeded: 'Too deep',
  chain_cycle: 'Loop back to an agent on the chain',
  chain_budget_exhausted: "Chain's budget used up",
  pair_rate_limited: 'Too many handoffs between the pair',
};

export function refusalReasonText(reason: string): string {
  return REFUSAL_REASONS[reason] ?? reason;
}

/** The bound that refused a handoff, as a person reads it: `limit` in the unit its name gives. */
export function refusalLimitText(limitName: string | null, limit: number | null): string {
  if (limit === null) return '—';
  switch (limitName) {
    case 'max_depth':
      return `at most ${limit} deep`;
    case 'cycles':
      return 'each agent once on a path';
    case 'budget':
      return `at most ${limit} handoffs in the chain`;
    case 'max_age_minutes':
      return `at most ${limit} minutes old`;
    case 'pair_per_minute':
      return `at most ${limit} a minute between the pair`;
    default:
      return `${limitName ?? 'limit'} ${limit}`;
  }
}

/**
 * Whether a live event may change a chain as shown: an event of one of its handoffs, or a new
 * handoff whose sender takes part in it (only a participant of a handoff may make one for it).
 */
export function chainMayChange(chain: TaskChainView | undefined, event: LiveTaskEvent): boolean {
  if (!chain) return false;
  if (chain.nodes.some((node) => node.id === event.task_id)) return true;
  return event.event === 'created' && chain.nodes.some((node) => node.sender.handle === event.sender || node.recipient.handle === event.sender);
}
