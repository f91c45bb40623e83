import { describe, expect, it } from '@jest/globals';
import type { AdminTaskRow } from '../api/types';
import { chainTree, refusalLimitText, refusalReasonText } from './chain-tree';

const row = (id: string, parent: string | null, depth: number): AdminTaskRow => ({
  id,
  context_id: 'ctx',
  state: 'pending',
  intent: 'inform',
  summary: id,
  sender: { handle: 'a@acme', name: 'A' },
  recipient: { handle: 'b@acme', name: 'B' },
  message_count: 1,
  artifact_count: 0,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  status_timestamp: '2026-01-01T00:00:00.000Z',
  chain: { parent_task_id: parent, root_task_id: 'R', depth },
});

const shape = (nodes: ReturnType<typeof chainTree>): unknown => nodes.map((node) => [node.task.id, shape(node.children)]);

describe('chainTree', () => {
  it('hangs each handoff under its parent, children in the order given', () => {
    const tree = chainTree([row('R', null, 0), row('B', 'R', 1), row('C', 'R', 1), row('D', 'B', 2), row('E', 'B', 2)]);
    expect(shape(tree)).toEqual([
      [
        'R',
        [
          [
            'B',
            [
              ['D', []],
              ['E', []],
            ],
          ],
          ['C', []],
        ],
      ],
    ]);
  });

  it('makes a handoff whose parent is missing a tree of its own, rather than losing it', () => {
    expect(shape(chainTree([row('R', null, 0), row('X', 'GONE', 3)]))).toEqual([
      ['R', []],
      ['X', []],
    ]);
  });

  it('reads an empty chain as no tree', () => {
    expect(chainTree([])).toEqual([]);
  });
});

describe('refusalReasonText', () => {
  it('says what each reason of the chain bounds means, and shows an unknown one as it is', () => {
    expect(refusalReasonText('chain_cycle')).toBe('Loop back to an agent on the chain');
    expect(refusalReasonText('something_new')).toBe('something_new');
  });
});

describe('refusalLimitText', () => {
  it('names the bound in its unit', () => {
    expect(refusalLimitText('max_depth', 8)).toBe('at most 8 deep');
    expect(refusalLimitText('cycles', 1)).toBe('each agent once on a path');
    expect(refusalLimitText('pair_per_minute', 30)).toBe('at most 30 a minute between the pair');
    expect(refusalLimitText('budget', 100)).toBe('at most 100 handoffs in the chain');
    expect(refusalLimitText('max_age_minutes', 1440)).toBe('at most 1440 minutes old');
    expect(refusalLimitText('a_new_bound', 3)).toBe('a_new_bound 3');
    expect(refusalLimitText(null, null)).toBe('—');
  });
});
