import { readFileSync } from 'node:fs';
import { expandPath, layoutProblems } from './check-layout-table';

describe('the code layout table check', () => {
  const document = readFileSync('docs/architecture.md', 'utf8');

  it('finds the table of docs/architecture.md whole', () => {
    expect(layoutProblems(document)).toEqual([]);
  });

  it('names a path the tree does not have, and a lib the table leaves out', () => {
    const drifted = document.replace('| `libs/relay-client` |', '| `libs/relay-clients` |');
    expect(layoutProblems(drifted)).toEqual(['names libs/relay-clients, which is not in the tree', 'does not name libs/relay-client']);
  });

  it('expands braces and the service placeholder', () => {
    expect(expandPath('apps/notifier/src/{events,targets}/', [])).toEqual(['apps/notifier/src/events', 'apps/notifier/src/targets']);
    expect(expandPath('apps/<service>/src/main.ts', ['cli', 'edge', 'tasks'])).toEqual(['apps/edge/src/main.ts', 'apps/tasks/src/main.ts']);
  });
});
