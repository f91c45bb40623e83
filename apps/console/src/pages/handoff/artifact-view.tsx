import type { ArtifactView } from '../../api/types';
import { FileDiff } from '../../components/file-diff';
import { PartsView } from './parts-view';

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** An artifact: a file diff as a diff, other typed artifacts by their fields, A2A artifacts by their parts. */
export function ArtifactContent({ artifact }: { artifact: ArtifactView }) {
  const { fields } = artifact;
  const diff = text(fields.diff);
  if (artifact.type === 'file_diff' && diff) return <FileDiff path={text(fields.path) ?? artifact.name ?? 'file'} diff={diff} />;
  const entries = Object.entries(fields);
  return (
    <div className="artifact">
      {artifact.description && <p>{artifact.description}</p>}
      {entries.length > 0 && (
        <dl className="artifact-fields">
          {entries.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd>{typeof value === 'string' ? value : <code>{JSON.stringify(value)}</code>}</dd>
            </div>
          ))}
        </dl>
      )}
      <PartsView parts={artifact.parts} />
    </div>
  );
}
