import * as contracts from './index';
import { SUBJECT_GRAMMAR } from './subjects';

function collectSubjects(): string[] {
  const subjects: string[] = [];
  for (const [name, value] of Object.entries(contracts)) {
    if (name.endsWith('_SUBJECTS') && typeof value === 'object' && value !== null) {
      subjects.push(...Object.values(value as Record<string, string>));
    }
  }
  return subjects;
}

describe('request subjects', () => {
  const subjects = collectSubjects();

  it('are exported by the contracts library', () => {
    expect(subjects.length).toBeGreaterThanOrEqual(3);
  });

  it.each(subjects)('%s follows relay.<service>.v1.<verb>', (subject) => {
    expect(subject).toMatch(SUBJECT_GRAMMAR);
  });

  it('are unique', () => {
    expect(new Set(subjects).size).toBe(subjects.length);
  });

  it('rejects subjects outside the grammar', () => {
    for (const bad of ['relay.tasks.get', 'relay.edge.v1.get', 'relay.tasks.v2.get', 'tasks.v1.get', 'relay.tasks.v1.Get']) {
      expect(bad).not.toMatch(SUBJECT_GRAMMAR);
    }
  });
});
