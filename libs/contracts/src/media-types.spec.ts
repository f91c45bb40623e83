import { RelayError } from './errors';
import { acceptsMediaType, assertPartsAccepted, MEDIA_RANGE_PATTERN, partMediaType } from './media-types';

describe('media types', () => {
  it('matches exact types, type/* and */*, ignoring case and parameters; no declared modes accept anything', () => {
    expect(acceptsMediaType(['text/plain'], 'Text/Plain; charset=utf-8')).toBe(true);
    expect(acceptsMediaType(['text/plain; charset=utf-8'], 'text/plain')).toBe(true);
    expect(acceptsMediaType(['text/*'], 'text/markdown')).toBe(true);
    expect(acceptsMediaType(['text/*'], 'textual/markdown')).toBe(false);
    expect(acceptsMediaType(['*/*'], 'image/png')).toBe(true);
    expect(acceptsMediaType(['text/plain', 'application/json'], 'image/png')).toBe(false);
    expect(acceptsMediaType(['application/json'], 'application/json-seq')).toBe(false);
    expect(acceptsMediaType([], 'image/png')).toBe(true);
  });

  it('gives text parts text/plain, data parts application/json, files their own type or octet-stream', () => {
    expect(partMediaType({ kind: 'text' })).toBe('text/plain');
    expect(partMediaType({ kind: 'data' })).toBe('application/json');
    expect(partMediaType({ kind: 'file', file: { mime_type: 'image/png' } })).toBe('image/png');
    expect(partMediaType({ kind: 'file', file: {} })).toBe('application/octet-stream');
  });

  it("takes a text or data part's declared media type: v1.0 mediaType, else v0.3 metadata mediaType or mimeType", () => {
    expect(partMediaType({ kind: 'text', media_type: 'application/x-unsupported' })).toBe('application/x-unsupported');
    expect(partMediaType({ kind: 'data', media_type: 'application/vnd.api+json' })).toBe('application/vnd.api+json');
    expect(partMediaType({ kind: 'text', metadata: { mediaType: 'text/markdown' } })).toBe('text/markdown');
    expect(partMediaType({ kind: 'data', metadata: { mimeType: 'application/x-unsupported' } })).toBe('application/x-unsupported');
    expect(partMediaType({ kind: 'text', media_type: ' ', metadata: { mediaType: 42 } })).toBe('text/plain');
    expect(() => assertPartsAccepted([{ kind: 'text', media_type: 'application/x-unsupported' }], ['text/plain', 'application/json'], 'bob@acme')).toThrow(
      RelayError,
    );
  });

  it('names the first refused part, its type and the accepted modes', () => {
    const parts = [{ kind: 'text' as const }, { kind: 'file' as const, file: { mime_type: 'image/png' } }];
    expect(() => assertPartsAccepted(parts, ['text/*', 'image/*'], 'bob@acme')).not.toThrow();
    let refused: unknown;
    try {
      assertPartsAccepted(parts, ['text/plain'], 'bob@acme');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(RelayError);
    expect(refused).toMatchObject({
      reason: 'content_type_not_supported',
      data: { field: 'message.parts[1]', media_type: 'image/png', accepted_media_types: 'text/plain' },
    });
  });

  it('reads declared modes as media types or ranges', () => {
    for (const mode of ['text/plain', 'image/*', '*/*', 'application/vnd.api+json', 'text/plain; charset=utf-8'])
      expect(MEDIA_RANGE_PATTERN.test(mode)).toBe(true);
    for (const mode of ['text', '*/plain', 'text/', '/json', 'text/plain/x', 'a b/c']) expect(MEDIA_RANGE_PATTERN.test(mode)).toBe(false);
  });
});
