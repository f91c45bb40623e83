import { randomUUID } from 'node:crypto';
import { TASK_LIMITS, type ArtifactInput, type TaskEventArtifact } from '@app/contracts';
import { appendedBytes, artifactBytes, artifactLimitError } from '../rules/artifact-limits';
import { plainParts } from './task-repository';
import type { ArtifactRow } from './task-rows';

/** An artifact row with its stored size. */
export type StoredArtifact = ArtifactRow & { size_bytes: number };

/** A task's artifacts after a write, the rows the write stores and their `artifact_updated` events. */
export interface ArtifactWrites {
  /** Every artifact of the task, by position. */
  artifacts: StoredArtifact[];
  /** The artifacts the write added or changed (to insert or update). */
  written: StoredArtifact[];
  /** One per artifact input, in the order given (an append carries only its chunk). */
  events: TaskEventArtifact[];
}

function heldOf(artifacts: StoredArtifact[]): { count: number; bytes: number } {
  return { count: artifacts.length, bytes: artifacts.reduce((sum, artifact) => sum + Number(artifact.size_bytes), 0) };
}

/**
 * The artifact inputs of a write applied in order to the task's artifacts `held`: a new id adds an
 * artifact at the next position, a known one is replaced in its place, or, with `append`, gets the
 * parts and metadata added to it. `caps: 'each'` refuses the first input that would take the task
 * past a cap (naming what the task held before it); `'total'` refuses the whole when the result would.
 */
export function applyArtifactInputs(taskId: string, held: StoredArtifact[], inputs: ArtifactInput[] | undefined, caps: 'each' | 'total'): ArtifactWrites {
  const artifacts = held.map((artifact) => ({ ...artifact, size_bytes: Number(artifact.size_bytes) }));
  const written = new Set<StoredArtifact>();
  const events: TaskEventArtifact[] = [];
  for (const artifact of inputs ?? []) {
    const artifactId = artifact.artifact_id ?? randomUUID();
    const parts = artifact.parts ? plainParts(artifact.parts) : [];
    const existing = artifacts.find((candidate) => candidate.artifact_id === artifactId);
    if (existing && artifact.append) {
      const added = appendedBytes(artifact, parts);
      if (caps === 'each' && heldOf(artifacts).bytes + added > TASK_LIMITS.artifactBytesPerTask) {
        throw artifactLimitError(heldOf(artifacts), { count: 0, bytes: added });
      }
      existing.parts = [...existing.parts, ...parts];
      existing.metadata = { ...existing.metadata, ...(artifact.metadata ?? {}) };
      existing.last_chunk = artifact.last_chunk ?? false;
      existing.size_bytes += added;
      written.add(existing);
      const { type, fields, name, description } = existing;
      events.push({
        artifact_id: artifactId,
        type,
        fields,
        name,
        description,
        parts,
        metadata: artifact.metadata ?? {},
        append: true,
        last_chunk: existing.last_chunk,
      });
      continue;
    }
    const stored = {
      type: artifact.type ?? null,
      fields: artifact.fields ?? {},
      name: artifact.name ?? null,
      description: artifact.description ?? null,
      parts,
      metadata: artifact.metadata ?? {},
    };
    const size = artifactBytes(stored);
    const lastChunk = artifact.append ? (artifact.last_chunk ?? false) : (artifact.last_chunk ?? true);
    if (caps === 'each') {
      const all = heldOf(artifacts);
      const others = existing ? { count: all.count - 1, bytes: all.bytes - existing.size_bytes } : all;
      if (others.count >= TASK_LIMITS.artifactsPerTask || others.bytes + size > TASK_LIMITS.artifactBytesPerTask) {
        throw artifactLimitError(others, { count: 1, bytes: size });
      }
    }
    const position = existing?.position ?? artifacts.reduce((max, candidate) => Math.max(max, candidate.position), 0) + 1;
    const row: StoredArtifact = { task_id: taskId, artifact_id: artifactId, position, ...stored, last_chunk: lastChunk, size_bytes: size };
    if (existing) Object.assign(existing, row);
    else artifacts.push(row);
    written.add(existing ?? row);
    events.push({ artifact_id: artifactId, ...stored, append: false, last_chunk: lastChunk });
  }
  if (caps === 'total') {
    const total = heldOf(artifacts);
    if (total.count > TASK_LIMITS.artifactsPerTask || total.bytes > TASK_LIMITS.artifactBytesPerTask) throw artifactLimitError(heldOf(held), total);
  }
  return { artifacts, written: [...written], events };
}

/** Artifact rows as the write statements take them (`jsonb_to_recordset`). */
export function artifactsJson(artifacts: StoredArtifact[]): string {
  return JSON.stringify(artifacts.map(({ task_id: _taskId, ...artifact }) => artifact));
}
