import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import type { HoldRule } from '../api/types';
import { excerptAt, offsetOfLine, trustPolicyToYaml } from './trust-yaml';

describe('the trust policy as YAML', () => {
  it('writes the agent, allow and block lists so that they read back the same', () => {
    const text = trustPolicyToYaml({ handle: 'frank@acme', allow: ['*@acme', 'bob@other'], block: [] });
    expect(parse(text)).toEqual({ agent: 'frank@acme', allow: ['*@acme', 'bob@other'], block: [] });
    expect(text).toBe('agent: "frank@acme"\nallow:\n  - "*@acme"\n  - "bob@other"\nblock: []\n');
    expect(parse(trustPolicyToYaml({ handle: 'a@b', allow: [], block: ['x "y"@z'] }))).toEqual({ agent: 'a@b', allow: [], block: ['x "y"@z'] });
  });

  it('writes the hold rules too, so that a save keeps them', () => {
    const hold: HoldRule[] = [{ name: 'external "proposals"', outside_org: true, intents: ['propose_action'], four_eyes: true }];
    const text = trustPolicyToYaml({ handle: 'ops@acme', allow: ['*@partner'], block: [], hold });
    expect(parse(text)).toEqual({ agent: 'ops@acme', allow: ['*@partner'], block: [], hold });
    expect(trustPolicyToYaml({ handle: 'ops@acme', allow: [], block: [], hold: [] })).not.toContain('hold');
  });

  it('writes the tool-prompt rules too, so that a save keeps them', () => {
    const toolPrompts = [{ name: 'outside senders', outside_org: true, four_eyes: true }];
    const text = trustPolicyToYaml({ handle: 'ops@acme', allow: [], block: [], hold: [], tool_prompts: toolPrompts });
    expect(parse(text)).toEqual({ agent: 'ops@acme', allow: [], block: [], tool_prompts: toolPrompts });
    expect(trustPolicyToYaml({ handle: 'ops@acme', allow: [], block: [], tool_prompts: [] })).not.toContain('tool_prompts');
  });

  it('shows the line an error points at, with a caret under the column', () => {
    expect(excerptAt('allow:\n  - a@b\n  bad: [\n', 3, 8)).toEqual({ line: 3, column: 8, text: '  bad: [', marker: '       ^' });
    expect(excerptAt('one line', 1, 99)?.marker).toBe(`${' '.repeat(8)}^`);
    expect(excerptAt('one line', 5, 1)).toBeNull();
  });

  it('finds where a line starts', () => {
    expect(offsetOfLine('ab\ncde\nf', 1)).toBe(0);
    expect(offsetOfLine('ab\ncde\nf', 3)).toBe(7);
  });

  it("writes the policy's own chain bounds, which a save would drop otherwise", () => {
    const text = trustPolicyToYaml({ handle: 'ops@acme', allow: [], block: [], chain: { max_depth: 3, cycle_allowed_pairs: ['a@x:b@x'] } });
    expect(parse(text)).toMatchObject({ chain: { max_depth: 3, cycle_allowed_pairs: ['a@x:b@x'] } });
    expect(trustPolicyToYaml({ handle: 'ops@acme', allow: [], block: [], chain: {} })).not.toContain('chain');
  });
});
