import { describe, expect, it } from '@jest/globals';
import { diffStats, parseUnifiedDiff } from './unified-diff';

describe('a unified diff, line by line', () => {
  it('tells file headers, hunks, added, removed and context lines apart', () => {
    const lines = parseUnifiedDiff('--- a/src/users.ts\n+++ b/src/users.ts\n@@ -1,3 +1,3 @@\n import x;\n-const a = 1;\n+const a = 2;\n--b\n');
    expect(lines.map((line) => line.kind)).toEqual(['header', 'header', 'hunk', 'context', 'removed', 'added', 'removed']);
    expect(diffStats(lines)).toEqual({ added: 1, removed: 2 });
  });

  it('starts over at the next file of a git diff', () => {
    const lines = parseUnifiedDiff('diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-x\n+y\ndiff --git a/z b/z\n--- a/z\n+++ b/z\n@@ -0,0 +1 @@\n+z\r\n');
    expect(lines.map((line) => line.kind)).toEqual(['header', 'header', 'header', 'hunk', 'removed', 'added', 'header', 'header', 'header', 'hunk', 'added']);
    expect(lines.at(-1)?.text).toBe('+z');
  });
});
