import { orgOf, type AdminTaskChain, type AdminTaskRow } from '@app/contracts';
import { hideRow } from './hidden-bodies';

const partyIn = (orgs: ReadonlySet<string>, row: Pick<AdminTaskRow, 'sender' | 'recipient'>): boolean =>
  orgs.has(orgOf(row.sender.handle)) || orgs.has(orgOf(row.recipient.handle));

/**
 * A handoff's chain as a person whose roles name orgs may read it (docs/orgs.md#scoped-roles): the
 * handoffs one of their orgs is party to, and the handoffs above them up to the root, so the tree
 * still holds together, with the summaries of those other orgs' handoffs left out; other orgs'
 * branches are not shown. The refusals shown are those of a handoff from or to one of their agents.
 */
export function chainForOrgs(chain: AdminTaskChain, orgs: readonly string[]): AdminTaskChain {
  const scope = new Set(orgs);
  const byId = new Map(chain.nodes.map((node) => [node.id, node]));
  const kept = new Set<string>();
  for (const node of chain.nodes) {
    if (!partyIn(scope, node)) continue;
    for (let at: AdminTaskRow | undefined = node; at && !kept.has(at.id); at = byId.get(at.chain?.parent_task_id ?? '')) kept.add(at.id);
  }
  const nodes = chain.nodes.filter((node) => kept.has(node.id)).map((node) => (partyIn(scope, node) ? node : hideRow(node)));
  const refusals = chain.refusals.filter((refusal) => scope.has(orgOf(refusal.sender)) || (refusal.recipient !== null && scope.has(orgOf(refusal.recipient))));
  return { ...chain, nodes, total: nodes.length, nodes_truncated: chain.nodes_truncated, refusals };
}
