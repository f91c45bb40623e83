import { parseArtifact, parseMessage, parsePart } from './parse';
import { invalidFieldOf } from './testing/invalid-field';

describe('parsePart', () => {
  it('reads v0.3 parts by kind', () => {
    expect(parsePart({ kind: 'text', text: 'hi', metadata: { a: 1 } }, 'p')).toEqual({ kind: 'text', text: 'hi', metadata: { a: 1 } });
    expect(parsePart({ kind: 'data', data: { a: 1 } }, 'p')).toEqual({ kind: 'data', data: { a: 1 } });
    expect(parsePart({ kind: 'file', file: { bytes: 'aGk=', name: 'x.txt', mimeType: 'text/plain' } }, 'p')).toEqual({
      kind: 'file',
      file: { bytes: 'aGk=', name: 'x.txt', mime_type: 'text/plain' },
    });
    expect(parsePart({ kind: 'file', file: { uri: 'https://example.com/x.pdf' } }, 'p')).toEqual({ kind: 'file', file: { uri: 'https://example.com/x.pdf' } });
  });

  it('reads v1.0 oneof parts', () => {
    expect(parsePart({ text: 'hi', mediaType: 'text/plain' }, 'p')).toEqual({ kind: 'text', text: 'hi', media_type: 'text/plain' });
    expect(parsePart({ data: [1, 2] }, 'p')).toEqual({ kind: 'data', data: [1, 2] });
    expect(parsePart({ data: { a: 1 }, mediaType: 'application/json', filename: 'a.json' }, 'p')).toEqual({
      kind: 'data',
      data: { a: 1 },
      media_type: 'application/json',
      filename: 'a.json',
    });
    expect(parsePart({ raw: 'aGk=', filename: 'x.bin', mediaType: 'application/octet-stream' }, 'p')).toEqual({
      kind: 'file',
      file: { bytes: 'aGk=', name: 'x.bin', mime_type: 'application/octet-stream' },
    });
    expect(parsePart({ url: 'https://example.com/a' }, 'p')).toEqual({ kind: 'file', file: { uri: 'https://example.com/a' } });
  });

  it('names the offending field', () => {
    expect(invalidFieldOf(() => parsePart({ kind: 'text' }, 'message.parts[0]'))).toBe('message.parts[0].text');
    expect(invalidFieldOf(() => parsePart({ kind: 'image' }, 'p'))).toBe('p.kind');
    expect(invalidFieldOf(() => parsePart({ text: 'a', data: {} }, 'p'))).toBe('p');
    expect(invalidFieldOf(() => parsePart({ raw: 'not base64!' }, 'p'))).toBe('p.raw');
    expect(invalidFieldOf(() => parsePart({ kind: 'file', file: { bytes: 'aGk=', uri: 'https://x' } }, 'p'))).toBe('p.file');
  });
});

describe('parseMessage', () => {
  it('reads a v1.0 message', () => {
    expect(
      parseMessage({ messageId: 'm-1', role: 'ROLE_USER', parts: [{ data: { a: 1 } }, { text: 'hello' }], contextId: 'c', taskId: 't', metadata: { k: 'v' } }),
    ).toEqual({
      messageId: 'm-1',
      role: 'user',
      parts: [
        { kind: 'data', data: { a: 1 } },
        { kind: 'text', text: 'hello' },
      ],
      body: 'hello',
      contextId: 'c',
      taskId: 't',
      metadata: { k: 'v' },
    });
  });

  it('reads a v0.3 message', () => {
    expect(parseMessage({ kind: 'message', messageId: 'm', role: 'agent', parts: [{ kind: 'text', text: 'x' }] })).toEqual({
      messageId: 'm',
      role: 'agent',
      parts: [{ kind: 'text', text: 'x' }],
      body: 'x',
    });
  });

  it('rejects missing parts, bad roles and over-long message ids', () => {
    expect(invalidFieldOf(() => parseMessage(undefined))).toBe('message');
    expect(invalidFieldOf(() => parseMessage({ parts: [] }))).toBe('message.parts');
    expect(invalidFieldOf(() => parseMessage({ parts: [{ text: 'a' }], role: 'ROLE_BOSS' }))).toBe('message.role');
    expect(invalidFieldOf(() => parseMessage({ parts: [{ text: 'a' }], messageId: 'x'.repeat(256) }))).toBe('message.messageId');
  });
});

describe('parseArtifact', () => {
  it('reads a whole artifact and a chunk (flags on the artifact or on an update wrapper)', () => {
    expect(parseArtifact({ artifactId: 'a', name: 'report', parts: [{ text: 'x' }] }, 'artifacts[0]')).toEqual({
      artifact_id: 'a',
      name: 'report',
      parts: [{ kind: 'text', text: 'x' }],
      append: false,
      last_chunk: true,
    });
    expect(parseArtifact({ artifact: { artifactId: 'a', parts: [{ kind: 'text', text: 'y' }] }, append: true, lastChunk: true }, 'a')).toMatchObject({
      artifact_id: 'a',
      append: true,
      last_chunk: true,
    });
    expect(parseArtifact({ artifactId: 'a', parts: [{ text: 'z' }], append: true }, 'a')).toMatchObject({ append: true, last_chunk: false });
  });

  it('needs parts, and an id to append', () => {
    expect(invalidFieldOf(() => parseArtifact({ artifactId: 'a' }, 'artifacts[0]'))).toBe('artifacts[0].parts');
    expect(invalidFieldOf(() => parseArtifact({ parts: [{ text: 'x' }], append: true }, 'artifacts[0]'))).toBe('artifacts[0].artifactId');
  });
});
