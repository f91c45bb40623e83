import { describe, expect, it } from '@jest/globals';
import { yamlSyntaxProblem } from './yaml-check';

describe('the YAML syntax check of the trust editor', () => {
  it('passes a well-formed policy', async () => {
    expect(await yamlSyntaxProblem('allow:\n  - "*@acme"\nblock: []\n')).toBeNull();
  });

  it('names the line and column of a duplicate key', async () => {
    expect(await yamlSyntaxProblem('allow:\n  - "*@acme"\nallow:\n  - eve@other\n')).toEqual({
      message: 'Invalid YAML: Map keys must be unique',
      place: { line: 3, column: 1 },
    });
  });

  it('names the place of an unclosed list', async () => {
    const problem = await yamlSyntaxProblem('allow: [a@acme\nblock: []\n');
    expect(problem?.place?.line).toBeGreaterThanOrEqual(1);
    expect(problem?.message).toMatch(/^Invalid YAML: /);
  });
});
