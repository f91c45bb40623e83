import { TASK_LIMITS, type ArtifactInput, type PartView } from '@app/contracts';
import { applyArtifactInputs, type StoredArtifact } from './artifact-writes';

const text = (value: string): PartView[] => [{ kind: 'text', text: value }] as PartView[];

function held(artifactId: string, position: number, sizeBytes: number): StoredArtifact {
  const { artifacts } = applyArtifactInputs('T1', [], [{ artifact_id: artifactId, parts: text('x') } as ArtifactInput], 'total');
  return { ...artifacts[0], position, size_bytes: sizeBytes };
}

describe('applyArtifactInputs', () => {
  it('adds at the next position, replaces in place and appends a chunk, with one event per input', () => {
    const writes = applyArtifactInputs(
      'T1',
      [held('a', 1, 10), held('b', 2, 10)],
      [
        { artifact_id: 'b', name: 'new b', parts: text('b2') },
        { artifact_id: 'a', append: true, parts: text('more'), metadata: { k: 1 } },
        { artifact_id: 'c', parts: text('c') },
      ] as ArtifactInput[],
      'each',
    );
    expect(writes.artifacts.map((artifact) => [artifact.artifact_id, artifact.position])).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    expect(writes.written.map((artifact) => artifact.artifact_id).sort()).toEqual(['a', 'b', 'c']);
    expect(writes.events.map((event) => [event.artifact_id, event.append, event.parts.length])).toEqual([
      ['b', false, 1],
      ['a', true, 1],
      ['c', false, 1],
    ]);
    expect(writes.artifacts[0].parts).toHaveLength(2);
    expect(writes.artifacts[0].last_chunk).toBe(false);
  });

  it('refuses, per input, the one that meets a cap, naming what the task held before it', () => {
    const full = Array.from({ length: TASK_LIMITS.artifactsPerTask }, (_, index) => held(`a${index}`, index + 1, 1));
    expect(() => applyArtifactInputs('T1', full, [{ artifact_id: 'new', parts: text('x') }] as ArtifactInput[], 'each')).toThrow(
      `A task holds at most ${TASK_LIMITS.artifactsPerTask} artifacts (it has ${TASK_LIMITS.artifactsPerTask})`,
    );
    expect(applyArtifactInputs('T1', full, [{ artifact_id: 'a0', parts: text('y') }] as ArtifactInput[], 'each').artifacts).toHaveLength(full.length);
    const big = [held('big', 1, TASK_LIMITS.artifactBytesPerTask - 5)];
    expect(() => applyArtifactInputs('T1', big, [{ artifact_id: 'big', append: true, parts: text('more') }] as ArtifactInput[], 'each')).toThrow(
      `it has ${TASK_LIMITS.artifactBytesPerTask - 5}`,
    );
  });
});
