import { metadataBoundsProblem, RelayError, type PartView } from '@app/contracts';

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

export const MESSAGE_ID_MAX_LENGTH = 255;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export function invalidParams(field: string, problem: string): RelayError {
  return new RelayError('invalid_params', `${field} ${problem}`, { field });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function optionalString(record: Record<string, unknown>, key: string, field: string, maxLength = 10000): string | undefined {
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

function base64(value: unknown, field: string): string {
  if (typeof value !== 'string' || !BASE64.test(value.replace(/\s/g, ''))) throw invalidParams(field, 'must be base64');
  return value;
}

function fileFromV03(file: unknown, field: string): Extract<PartView, { kind: 'file' }>['file'] {
  if (!isRecord(file)) throw invalidParams(field, 'must be an object with bytes or uri');
  const name = optionalString(file, 'name', `${field}.name`, 1000);
  const mimeType = optionalString(file, 'mimeType', `${field}.mimeType`, 255);
  const hasBytes = file.bytes !== undefined && file.bytes !== null;
  const hasUri = file.uri !== undefined && file.uri !== null;
  if (hasBytes === hasUri) throw invalidParams(field, 'must carry exactly one of bytes or uri');
  return {
    ...(name !== undefined ? { name } : {}),
    ...(mimeType !== undefined ? { mime_type: mimeType } : {}),
    ...(hasBytes ? { bytes: base64(file.bytes, `${field}.bytes`) } : { uri: uriOf(file.uri, `${field}.uri`) }),
  };
}

function uriOf(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 8192) throw invalidParams(field, 'must be a URI');
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
    if (kind === 'text') {
      if (typeof value.text !== 'string') throw invalidParams(`${field}.text`, 'must be a string');
      return withMetadata({ kind: 'text', text: value.text });
    }
    if (kind === 'data') {
      if (value.data === undefined) throw invalidParams(`${field}.data`, 'is required');
      return withMetadata({ kind: 'data', data: value.data });
    }
    if (kind === 'file') return withMetadata({ kind: 'file', file: fileFromV03(value.file, `${field}.file`) });
    throw invalidParams(`${field}.kind`, 'must be text, file or data');
  }
  const members = ['text', 'raw', 'url', 'data'].filter((key) => value[key] !== undefined && value[key] !== null);
  if (members.length !== 1) throw invalidParams(field, 'must carry exactly one of text, raw, url or data');
  const filename = optionalString(value, 'filename', `${field}.filename`, 1000);
  const mediaType = optionalString(value, 'mediaType', `${field}.mediaType`, 255);
  const described = { ...(mediaType !== undefined ? { media_type: mediaType } : {}), ...(filename !== undefined ? { filename } : {}) };
  switch (members[0]) {
    case 'text':
      if (typeof value.text !== 'string') throw invalidParams(`${field}.text`, 'must be a string');
      return withMetadata({ kind: 'text', text: value.text, ...described });
    case 'data':
      return withMetadata({ kind: 'data', data: value.data, ...described });
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
  if (value.length > 100) throw invalidParams(field, 'must hold at most 100 parts');
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
  const messageId = optionalString(value, 'messageId', `${field}.messageId`, MESSAGE_ID_MAX_LENGTH);
  const taskId = optionalString(value, 'taskId', `${field}.taskId`, 255);
  const contextId = optionalString(value, 'contextId', `${field}.contextId`, 255);
  const metadata = optionalMetadata(value, 'metadata', `${field}.metadata`);
  const role = parseRole(value.role, `${field}.role`);
  const firstText = parts.find((part): part is Extract<PartView, { kind: 'text' }> => part.kind === 'text');
  return {
    ...(messageId !== undefined ? { messageId } : {}),
    ...(role !== undefined ? { role } : {}),
    parts,
    body: firstText?.text ?? '',
    ...(taskId !== undefined ? { taskId } : {}),
    ...(contextId !== undefined ? { contextId } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
  };
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
  const artifactId = optionalString(inner, 'artifactId', `${innerField}.artifactId`, 255);
  const name = optionalString(inner, 'name', `${innerField}.name`, 1000);
  const description = optionalString(inner, 'description', `${innerField}.description`, 10000);
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
  if (value.length > 50) throw invalidParams(field, 'must hold at most 50 artifacts');
  return value.map((artifact, index) => parseArtifact(artifact, `${field}[${index}]`));
}
