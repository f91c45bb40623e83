import { RelayError } from './errors';

/** The media types an agent card declares when its agent has no `input_modes` of its own. */
export const DEFAULT_INPUT_MODES: readonly string[] = ['text/plain', 'application/json'];

/** The input modes an agent declares: its own, or the relay's default. */
export function inputModesOf(agent: { input_modes: string[] | null }): readonly string[] {
  return agent.input_modes ?? DEFAULT_INPUT_MODES;
}

const TOKEN = "[a-z0-9][a-z0-9!#$&^_.+'-]*";

/** A media type or range as an agent may declare it: `type/subtype`, `type/*` or `*\/*`, parameters allowed. */
export const MEDIA_RANGE_PATTERN = new RegExp(`^(\\*/\\*|${TOKEN}/(\\*|${TOKEN}))\\s*(;.*)?$`, 'i');

/** `Text/HTML; charset=utf-8` → `text/html`: parameters are ignored when types are compared. */
export function mediaTypeEssence(mediaType: string): string {
  return mediaType.split(';')[0].trim().toLowerCase();
}

/** Whether a media type is within the declared modes: exact, `type/*` or `*\/*`; no declared modes accept anything. */
export function acceptsMediaType(modes: readonly string[], mediaType: string): boolean {
  if (modes.length === 0) return true;
  const essence = mediaTypeEssence(mediaType);
  const type = essence.split('/')[0];
  return modes.some((mode) => {
    const range = mediaTypeEssence(mode);
    return range === '*/*' || range === essence || (range.endsWith('/*') && range.slice(0, -2) === type);
  });
}

/** A part as far as its media type goes (a PartView, or the contract's PartDto). */
export interface TypedPart {
  kind: 'text' | 'data' | 'file';
  /** A text or data part's declared media type (A2A v1.0 `mediaType`). */
  media_type?: string;
  file?: { mime_type?: string };
  metadata?: Record<string, unknown>;
}

/**
 * What an A2A v0.3 text or data part declares in its metadata, which is where v0.3 (whose text and
 * data parts have no media type field) carries one: `mediaType`, else `mimeType`.
 */
function metadataMediaType(metadata: Record<string, unknown> | undefined): string | undefined {
  const declared = metadata?.mediaType ?? metadata?.mimeType;
  return typeof declared === 'string' && declared.trim() !== '' ? declared : undefined;
}

/**
 * The media type a part carries: a file its own (octet-stream when it names none); a text or data
 * part the one it declares, else plain text or JSON.
 */
export function partMediaType(part: TypedPart): string {
  if (part.kind === 'file') return part.file?.mime_type ?? 'application/octet-stream';
  const declared = part.media_type !== undefined && part.media_type.trim() !== '' ? part.media_type : metadataMediaType(part.metadata);
  return declared ?? (part.kind === 'data' ? 'application/json' : 'text/plain');
}

/**
 * Refuses (`content_type_not_supported`) the first part whose media type the recipient does not
 * accept, naming it as the client wrote it (`message.parts[2]`).
 */
export function assertPartsAccepted(parts: readonly TypedPart[], modes: readonly string[], recipientHandle: string, field = 'message.parts'): void {
  const index = parts.findIndex((part) => !acceptsMediaType(modes, partMediaType(part)));
  if (index < 0) return;
  const mediaType = partMediaType(parts[index]);
  throw new RelayError(
    'content_type_not_supported',
    `${field}[${index}] is ${mediaType}, which ${recipientHandle} does not accept (its input modes: ${modes.join(', ')})`,
    { field: `${field}[${index}]`, media_type: mediaType, accepted_media_types: modes.join(', ') },
  );
}
