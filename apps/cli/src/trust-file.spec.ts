import { parse as parseYaml } from 'yaml';
import type { TrustPolicy } from '@app/contracts';
import { listsItWouldDrop, trustYaml } from './trust-file';

const POLICY: TrustPolicy = {
  handle: 'ops@acme',
  allow: ['*@partner'],
  block: [],
  hold: [{ name: 'say "hi" \u001b[31m', paths: ['db/**'], four_eyes: true, expires_after_minutes: 60 }],
  tool_prompts: [{ name: 'outside', outside_org: true }],
  chain: { max_depth: 3, cycle_allowed_pairs: ['ops@acme:review@acme'] },
  updated_at: '2026-12-06T03:00:00.000Z',
};

describe('trust.yaml of the CLI', () => {
  it('prints every field of the policy but its handle and time as the file trust apply reads back', () => {
    const text = trustYaml(POLICY);
    const { handle: _handle, updated_at: _updatedAt, ...lists } = POLICY;
    expect(parseYaml(text)).toEqual({ agent: 'ops@acme', ...lists });
    // A control character is escaped, never written to the terminal as it is.
    expect(text).not.toContain('\u001b');
    expect(text).toContain('changed 2026-12-06T03:00:00.000Z');
  });

  it('prints a field the admin API adds, without a change here', () => {
    const withMore = { ...POLICY, review: [{ name: 'new kind' }] } as TrustPolicy;
    expect(parseYaml(trustYaml(withMore))).toMatchObject({ review: [{ name: 'new kind' }] });
  });

  it('names the lists a file leaves out that the stored policy has entries in; an empty list is on purpose', () => {
    expect(listsItWouldDrop({ agent: 'ops@acme', allow: [] }, POLICY)).toEqual([
      'hold: 1 hold rules ("say \\"hi\\" \\u001b[31m")',
      'tool_prompts: 1 tool-prompt rules ("outside")',
      'chain: 2 chain bounds (max_depth: 3, cycle_allowed_pairs: ["ops@acme:review@acme"])',
    ]);
    expect(listsItWouldDrop({ allow: [], block: [], hold: [], tool_prompts: [], chain: {} }, POLICY)).toEqual([]);
    expect(listsItWouldDrop({}, { ...POLICY, allow: [], hold: [], tool_prompts: [], chain: {} })).toEqual([]);
  });
});
