import { CHAIN_REFERENCE_LIMIT, invalidParams, metadataBoundsProblem, TASK_LIMITS, type PartView } from '@app/contracts';

/** An A2A message as the relay reads it, whatever its wire version. */
export interface A2aMessageInput {
  messageId?: string;
  /** `user`/`ROLE_USER` or `agent`/`ROLE_AGENT`; undefined when the client sent none. */
  role?: 'user' | 'agent';
  parts: PartView[];
  /** The first text part (empty when the message has none). */
  body: string;
  taskId?: string;
  contextId?: string;
  metadata?: Record<string, unknown>;
  /** `referenceTaskIds` (v0.3 and v1.0, `reference_task_ids` in ProtoJSON): a new task's parent is the first the sender takes part in (docs/chains.md). */
  referenceTaskIds?: string[];
}

/** A standard A2A artifact, chunked or whole, as the relay reads it. */
export interface A2aArtifactInput {
  artifact_id?: string;
  name?: string;
  description?: string;
  parts: PartView[];
  metadata?: Record<string, unknown>;
  /** Append these parts to the artifact with the same id instead of replacing it. */
  append: boolean;
  /** This chunk is the artifact's last (default: true for a whole artifact, false for an appended chunk). */
  last_chunk: boolean;
}

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function optionalString(record: Record<string, unknown>, key: string, field: string, maxLength: number): string | undefined {
  const value = record[key];
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw invalidParams(field, 'must be a string');
  if (value.length > maxLength) throw invalidParams(field, `must be at most ${maxLength} characters`);
  return value;
}

/** A metadata object, within the relay's bounds (keys per object, depth, bytes). */
export function optionalMetadata(record: Record<string, unknown>, key: string, field: string): Record<string, unknown> | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalidParams(field, 'must be a JSON object');
  const problem = metadataBoundsProblem(value);
  if (problem !== undefined) throw invalidParams(field, problem);
  return value;
}

/** The content of a `data` part, within the bounds of metadata (keys per object, depth, bytes). */
export function boundedData(value: unknown, field: string): unknown {
  const problem = metadataBoundsProblem(value);
  if (problem !== undefined) throw invalidParams(field, problem);
  return value;
}

function base64(value: unknown, field: string): string {
  if (typeof value !== 'string' || !BASE64.test(value.replace(/\s/g, ''))) throw invalidParams(field, 'must be base64');
  return value;
}

function fileFromV03(file: unknown, field: string): Extract<PartView, { kind: 'file' }>['file'] {
  if (!isRecord(file)) throw invalidParams(field, 'must be an object with bytes or uri');
  const name = optionalString(file, 'name', `${field}.name`, TASK_LIMITS.fileNameChars);
  const mimeType = optionalString(file, 'mimeType', `${field}.mimeType`, TASK_LIMITS.mediaTypeChars);
  const hasBytes = file.bytes !== undefined && file.bytes !== null;
  const hasUri = file.uri !== undefined && file.uri !== null;
  if (hasBytes === hasUri) throw invalidParams(field, 'must carry exactly one of bytes or uri');
  return {
    ...(name !== undefined ? { name } : {}),
    ...(mimeType !== undefined ? { mime_type: mimeType } : {}),
    ...(hasBytes ? { bytes: base64(file.bytes, `${field}.bytes`) } : { uri: uriOf(file.uri, `${field}.uri`) }),
  };
}

function text(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalidParams(field, 'must be a string');
  if (value.length > TASK_LIMITS.textPartChars) throw invalidParams(field, `must be at most ${TASK_LIMITS.textPartChars} characters`);
  return value;
}

function uriOf(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalidParams(field, 'must be a URI');
  if (value.length > TASK_LIMITS.fileUriChars) throw invalidParams(field, `must be at most ${TASK_LIMITS.fileUriChars} characters`);
  return value;
}

/**
 * Reads one part in either wire shape: v0.3 (`kind` text/file/data) or v1.0 (a oneof of
 * `text`, `raw`, `url` or `data`, with `filename` and `mediaType` beside it).
 */
export function parsePart(value: unknown, field: string): PartView {
  if (!isRecord(value)) throw invalidParams(field, 'must be an object');
  const metadata = optionalMetadata(value, 'metadata', `${field}.metadata`);
  const withMetadata = <T extends PartView>(part: T): T => (metadata ? { ...part, metadata } : part);
  const kind = value.kind;
  if (kind !== undefined) {
    if (kind === 'text') return withMetadata({ kind: 'text', text: text(value.text, `${field}.text`) });
    if (kind === 'data') {
      if (value.data === undefined || value.data === null || value.data === '') throw invalidParams(`${field}.data`, 'is required');
      return withMetadata({ kind: 'data', data: boundedData(value.data, `${field}.data`) });
    }
    if (kind === 'file') return withMetadata({ kind: 'file', file: fileFromV03(value.file, `${field}.file`) });
    throw invalidParams(`${field}.kind`, 'must be text, file or data');
  }
  const members = ['text', 'raw', 'url', 'data'].filter((key) => value[key] !== undefined && value[key] !== null);
  if (members.length !== 1) throw invalidParams(field, 'must carry exactly one of text, raw, url or data');
  const filename = optionalString(value, 'filename', `${field}.filename`, TASK_LIMITS.fileNameChars);
  const mediaType = optionalString(value, 'mediaType', `${field}.mediaType`, TASK_LIMITS.mediaTypeChars);
  const described = { ...(mediaType !== undefined ? { media_type: mediaType } : {}), ...(filename !== undefined ? { filename } : {}) };
  switch (members[0]) {
    case 'text':
      return withMetadata({ kind: 'text', text: text(value.text, `${field}.text`), ...described });
    case 'data':
      if (value.data === '') throw invalidParams(`${field}.data`, 'is required');
      return withMetadata({ kind: 'data', data: boundedData(value.data, `${field}.data`), ...described });
    default: {
      const file: Extract<PartView, { kind: 'file' }>['file'] = {
        ...(filename !== undefined ? { name: filename } : {}),
        ...(mediaType !== undefined ? { mime_type: mediaType } : {}),
        ...(members[0] === 'raw' ? { bytes: base64(value.raw, `${field}.raw`) } : { uri: uriOf(value.url, `${field}.url`) }),
      };
      return withMetadata({ kind: 'file', file });
    }
  }
}

export function parseParts(value: unknown, field: string): PartView[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidParams(field, 'must be a non-empty array of parts');
  if (value.length > TASK_LIMITS.partsPerMessage) throw invalidParams(field, `must hold at most ${TASK_LIMITS.partsPerMessage} parts`);
  return value.map((part, index) => parsePart(part, `${field}[${index}]`));
}

function parseRole(value: unknown, field: string): 'user' | 'agent' | undefined {
  if (value === undefined || value === null || value === '' || value === 'ROLE_UNSPECIFIED' || value === 0) return undefined;
  if (value === 'user' || value === 'ROLE_USER' || value === 1) return 'user';
  if (value === 'agent' || value === 'ROLE_AGENT' || value === 2) return 'agent';
  throw invalidParams(field, 'must be user/ROLE_USER or agent/ROLE_AGENT');
}

/** Reads an A2A message of either version (params already normalized to camelCase). */
export function parseMessage(value: unknown, field = 'message'): A2aMessageInput {
  if (!isRecord(value)) throw invalidParams(field, 'is required and must be a Message object');
  const parts = parseParts(value.parts, `${field}.parts`);
  const messageId = optionalString(value, 'messageId', `${field}.messageId`, TASK_LIMITS.messageIdChars);
  const taskId = optionalString(value, 'taskId', `${field}.taskId`, TASK_LIMITS.a2aIdChars);
  const contextId = optionalString(value, 'contextId', `${field}.contextId`, TASK_LIMITS.contextIdChars);
  const metadata = optionalMetadata(value, 'metadata', `${field}.metadata`);
  const role = parseRole(value.role, `${field}.role`);
  const referenceTaskIds = parseReferenceTaskIds(value.referenceTaskIds, `${field}.referenceTaskIds`);
  const firstText = parts.find((part): part is Extract<PartView, { kind: 'text' }> => part.kind === 'text');
  return {
    ...(messageId !== undefined ? { messageId } : {}),
    ...(role !== undefined ? { role } : {}),
    parts,
    body: firstText?.text ?? '',
    ...(taskId !== undefined ? { taskId } : {}),
    ...(contextId !== undefined ? { contextId } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(referenceTaskIds.length > 0 ? { referenceTaskIds } : {}),
  };
}

function parseReferenceTaskIds(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParams(field, 'must be an array of task ids');
  if (value.length > CHAIN_REFERENCE_LIMIT) throw invalidParams(field, `must name at most ${CHAIN_REFERENCE_LIMIT} tasks`);
  return value.map((id, index) => {
    if (typeof id !== 'string' || id.trim() === '') throw invalidParams(`${field}[${index}]`, 'must be a task id');
    if (id.length > TASK_LIMITS.a2aIdChars) throw invalidParams(`${field}[${index}]`, `must be at most ${TASK_LIMITS.a2aIdChars} characters`);
    return id;
  });
}

function optionalBoolean(record: Record<string, unknown>, key: string, field: string): boolean | undefined {
  const value = record[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidParams(field, 'must be a boolean');
  return value;
}

/**
 * Reads a standard A2A artifact. The chunk flags `append` / `lastChunk` are read from the
 * artifact itself or, in the shape of an artifact-update event (`{artifact, append, lastChunk}`),
 * from its wrapper.
 */
export function parseArtifact(value: unknown, field: string): A2aArtifactInput {
  if (!isRecord(value)) throw invalidParams(field, 'must be an Artifact object');
  const inner = isRecord(value.artifact) ? value.artifact : value;
  const innerField = inner === value ? field : `${field}.artifact`;
  const artifactId = optionalString(inner, 'artifactId', `${innerField}.artifactId`, TASK_LIMITS.artifactIdChars);
  const name = optionalString(inner, 'name', `${innerField}.name`, TASK_LIMITS.artifactNameChars);
  const description = optionalString(inner, 'description', `${innerField}.description`, TASK_LIMITS.artifactDescriptionChars);
  const metadata = optionalMetadata(inner, 'metadata', `${innerField}.metadata`);
  const append = optionalBoolean(value, 'append', `${field}.append`) ?? optionalBoolean(inner, 'append', `${innerField}.append`) ?? false;
  // A whole artifact is its own last chunk unless the client says more follow.
  const lastChunk = optionalBoolean(value, 'lastChunk', `${field}.lastChunk`) ?? optionalBoolean(inner, 'lastChunk', `${innerField}.lastChunk`) ?? !append;
  if (append && artifactId === undefined) throw invalidParams(`${innerField}.artifactId`, 'is required to append to an artifact');
  return {
    ...(artifactId !== undefined ? { artifact_id: artifactId } : {}),
    ...(name !== undefined ? { name } : {}),
    ...(description !== undefined ? { description } : {}),
    parts: parseParts(inner.parts, `${innerField}.parts`),
    ...(metadata !== undefined ? { metadata } : {}),
    append,
    last_chunk: lastChunk,
  };
}

export function parseArtifacts(value: unknown, field: string): A2aArtifactInput[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidParams(field, 'must be an array of artifacts');
  if (value.length > TASK_LIMITS.artifactsPerRequest) throw invalidParams(field, `must hold at most ${TASK_LIMITS.artifactsPerRequest} artifacts`);
  return value.map((artifact, index) => parseArtifact(artifact, `${field}[${index}]`));
}
