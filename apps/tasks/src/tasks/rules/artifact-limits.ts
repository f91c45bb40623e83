import { RelayError, TASK_LIMITS, type ArtifactInput, type PartView } from '@app/contracts';

/** An artifact's `size_bytes`: its fields, parts and metadata as JSON, its name and description. */
export function artifactBytes(artifact: {
  fields?: unknown;
  parts?: PartView[] | unknown;
  metadata?: unknown;
  name?: string | null;
  description?: string | null;
}): number {
  return (
    Buffer.byteLength(JSON.stringify(artifact.fields ?? {})) +
    Buffer.byteLength(JSON.stringify(artifact.parts ?? [])) +
    Buffer.byteLength(JSON.stringify(artifact.metadata ?? {})) +
    Buffer.byteLength(artifact.name ?? '') +
    Buffer.byteLength(artifact.description ?? '')
  );
}

/** What an append adds to an artifact's `size_bytes`: the new parts and metadata. */
export function appendedBytes(artifact: ArtifactInput, parts: PartView[]): number {
  return Buffer.byteLength(JSON.stringify(parts)) + Buffer.byteLength(JSON.stringify(artifact.metadata ?? {}));
}

/** The error of a write that would take a task past one of its artifact caps; it names the cap. */
export function artifactLimitError(held: { count: number; bytes: number }, adding: { count: number; bytes: number }): RelayError {
  if (held.count + adding.count > TASK_LIMITS.artifactsPerTask) {
    return new RelayError('invalid_params', `A task holds at most ${TASK_LIMITS.artifactsPerTask} artifacts (it has ${held.count})`, {
      field: 'artifacts',
      limit: 'artifacts_per_thread',
      max: TASK_LIMITS.artifactsPerTask,
    });
  }
  return new RelayError(
    'invalid_params',
    `A task's artifacts hold at most ${TASK_LIMITS.artifactBytesPerTask} bytes in all (it has ${held.bytes}, this adds ${adding.bytes}); send large content as a file reference or link`,
    { field: 'artifacts', limit: 'artifact_bytes_per_thread', max: TASK_LIMITS.artifactBytesPerTask },
  );
}
