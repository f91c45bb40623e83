import { anchorsOf, brokenLinks, headingSlug, linkTargets, repositoryLinkProblems } from './check-doc-links';

describe('the Markdown link check', () => {
  it('finds every relative link of the repository resolved', () => {
    expect(repositoryLinkProblems()).toEqual([]);
  });

  it('makes heading anchors as GitHub does', () => {
    expect(headingSlug('Live inbox (`tasks/watch`)')).toBe('live-inbox-taskswatch');
    expect(headingSlug('HTTP+JSON binding')).toBe('httpjson-binding');
    expect(headingSlug("The RPC layer's cost (`rpc-layer-cost`)")).toBe('the-rpc-layers-cost-rpc-layer-cost');
    expect(headingSlug('Use it from Claude Code / Codex')).toBe('use-it-from-claude-code--codex');
    expect([...anchorsOf('# Retention\n\n```sh\n# not a heading\n```\n\n## Retention\n<a id="kept"></a>\n')]).toEqual(['retention', 'retention-1', 'kept']);
  });

  it('reads links and images outside code', () => {
    const markdown = 'See [limits](operations.md#limits) and ![page](console-live.png "Live").\n\n`[not](a-link.md)`\n\n```md\n[nor](this.md)\n```\n';
    expect(linkTargets(markdown)).toEqual(['operations.md#limits', 'console-live.png']);
  });

  it('names a missing file, a missing heading and a missing anchor of the same document', () => {
    const files: Record<string, string> = { 'docs/operations.md': '# Operations\n\n## Limits\n' };
    const read = (path: string): string | null => files[path] ?? null;
    const exists = (path: string): boolean => path in files || path === 'docs';
    const document =
      '# Agents\n\n## Hooks\n\n[a](operations.md#limits) [b](operations.md#limitz) [c](gone.md) [d](#hooks) [e](#hook) [f](https://example.com/x#y) [g](../docs/)';
    expect(brokenLinks('docs/agents.md', document, read, exists)).toEqual([
      'docs/agents.md: operations.md#limitz: docs/operations.md has no heading #limitz',
      'docs/agents.md: gone.md: docs/gone.md does not exist',
      'docs/agents.md: #hook: docs/agents.md has no heading #hook',
    ]);
  });
});
