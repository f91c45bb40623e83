import type { ArtifactView } from '../../api/types';
import { ArtifactContent } from './artifact-view';

/** The task's artifacts as they stand now (file diffs rendered as diffs). */
export function TaskArtifacts({ artifacts }: { artifacts: ArtifactView[] }) {
  if (artifacts.length === 0) return null;
  return (
    <section aria-labelledby="artifacts-title">
      <h2 id="artifacts-title">Artifacts</h2>
      <ul className="artifacts">
        {artifacts.map((artifact) => (
          <li key={artifact.artifact_id}>
            {artifact.name && <p className="artifact-name">{artifact.name}</p>}
            <ArtifactContent artifact={artifact} />
          </li>
        ))}
      </ul>
    </section>
  );
}
