import type { AdminChainRefusal, AdminTaskChain, AdminTaskRow } from '@app/contracts';
import { chainForOrgs } from './chain-scope';

const node = (id: string, sender: string, recipient: string, parent: string | null, depth: number): AdminTaskRow => ({
  id,
  context_id: `ctx-${id}`,
  state: 'pending',
  intent: 'inform',
  summary: `summary of ${id}`,
  sender: { handle: sender, name: sender },
  recipient: { handle: recipient, name: recipient },
  message_count: 1,
  artifact_count: 0,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  status_timestamp: '2026-01-01T00:00:00.000Z',
  chain: { parent_task_id: parent, root_task_id: 'root', depth },
});

const refusal = (sender: string, recipient: string): AdminChainRefusal => ({
  id: `${sender}-${recipient}`,
  at: '2026-01-01T00:00:00.000Z',
  reason: 'chain_cycle',
  sender,
  recipient,
  limit: 1,
  limit_name: 'cycles',
  path: [sender, recipient],
  parent_task_id: 'root',
});

// web → payments → payments, with a branch of ops's own under the root.
const chain: AdminTaskChain = {
  task_id: 'c',
  root_task_id: 'root',
  nodes: [
    node('root', 'ana@web', 'bob@payments', null, 0),
    node('b', 'bob@payments', 'cy@payments', 'root', 1),
    node('o', 'bob@payments', 'ola@ops', 'root', 1),
    node('c', 'cy@payments', 'dee@payments', 'b', 2),
  ],
  total: 4,
  nodes_truncated: false,
  refusals: [refusal('dee@payments', 'ana@web'), refusal('ola@ops', 'ana@web')],
  refusals_truncated: false,
};

describe('chainForOrgs', () => {
  it("shows an org its handoffs and the path above them, other orgs' summaries left out, other branches not at all", () => {
    const seen = chainForOrgs(chain, ['ops']);
    expect(seen.nodes.map((n) => n.id)).toEqual(['root', 'o']);
    expect(seen.nodes.find((n) => n.id === 'root')?.summary).not.toContain('summary of');
    expect(seen.nodes.find((n) => n.id === 'o')?.summary).toBe('summary of o');
    expect(seen.total).toBe(2);
    expect(seen.refusals.map((r) => r.sender)).toEqual(['ola@ops']);
  });

  it("shows an org every handoff one of its agents is party to, whole, and only its agents' refusals", () => {
    const seen = chainForOrgs(chain, ['payments']);
    expect(seen.nodes.map((n) => n.id)).toEqual(['root', 'b', 'o', 'c']);
    expect(seen.nodes.every((n) => n.summary.startsWith('summary of'))).toBe(true);
    expect(seen.refusals.map((r) => r.sender)).toEqual(['dee@payments']);
  });

  it('shows an org party to nothing in the chain nothing', () => {
    const seen = chainForOrgs(chain, ['legal']);
    expect(seen.nodes).toEqual([]);
    expect(seen.refusals).toEqual([]);
  });
});
