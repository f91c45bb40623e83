import { describe, expect, it } from '@jest/globals';
import type { AdminTaskRow, LiveTaskEvent, TaskChainView } from '../api/types';
import { chainMayChange, chainTree, refusalLimitText, refusalReasonText } from './chain-tree';

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

describe('chainMayChange', () => {
  const chain: TaskChainView = {
    task_id: 'B',
    root_task_id: 'R',
    nodes: [row('R', null, 0), row('B', 'R', 1)],
    total: 2,
    nodes_truncated: false,
    refusals: [],
    refusals_truncated: false,
  };
  const event = (changes: Partial<LiveTaskEvent>): LiveTaskEvent => ({
    position: '1',
    event: 'accepted',
    task_id: 'X',
    state: 'accepted',
    intent: 'inform',
    summary: '',
    sender: 'z@other',
    recipient: 'y@other',
    at: '2026-01-01T00:00:00.000Z',
    ...changes,
  });

  it('is true for an event of a handoff of the chain, and for a handoff made by one of its participants', () => {
    expect(chainMayChange(chain, event({ task_id: 'R' }))).toBe(true);
    expect(chainMayChange(chain, event({ event: 'created', sender: 'b@acme' }))).toBe(true);
  });

  it('is false for anything else, and before the chain is read', () => {
    expect(chainMayChange(chain, event({}))).toBe(false);
    expect(chainMayChange(chain, event({ event: 'accepted', sender: 'b@acme' }))).toBe(false);
    expect(chainMayChange(undefined, event({ task_id: 'R' }))).toBe(false);
  });
});
