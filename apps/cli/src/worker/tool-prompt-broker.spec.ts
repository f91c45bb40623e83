import { parseAllowTools, toolIsPreApproved } from './tool-prompt-broker';

describe('the pre-approved tools of a worker', () => {
  it('match tool names exactly, or with * as a wildcard', () => {
    const patterns = parseAllowTools('Read, Grep,mcp__agentrelay__*,');
    expect(patterns).toEqual(['Read', 'Grep', 'mcp__agentrelay__*']);
    expect(toolIsPreApproved('Read', patterns)).toBe(true);
    expect(toolIsPreApproved('ReadAll', patterns)).toBe(false);
    expect(toolIsPreApproved('mcp__agentrelay__send_handoff', patterns)).toBe(true);
    expect(toolIsPreApproved('mcp__other__send', patterns)).toBe(false);
    expect(toolIsPreApproved('Bash', parseAllowTools(''))).toBe(false);
  });

  it('treat regular-expression characters in a name literally', () => {
    expect(toolIsPreApproved('Bash', ['B.sh'])).toBe(false);
    expect(toolIsPreApproved('B.sh', ['B.sh'])).toBe(true);
  });
});
