import { assertMessageFitsReplies, messageReplyBytes, NATS_MAX_PAYLOAD_FOR_FULL_BODY, PAYLOAD_LIMITS, requestBodyLimit } from './payload-limits';
import { metadataBoundsProblem, TASK_LIMITS } from './limits';

describe('requestBodyLimit', () => {
  it('is the whole 1 MiB once NATS carries it with the envelope, and less under a smaller max_payload', () => {
    expect(requestBodyLimit(NATS_MAX_PAYLOAD_FOR_FULL_BODY)).toBe(PAYLOAD_LIMITS.requestBodyBytes);
    expect(requestBodyLimit(8 * 1024 * 1024)).toBe(PAYLOAD_LIMITS.requestBodyBytes);
    expect(requestBodyLimit(1024 * 1024)).toBe(1024 * 1024 - PAYLOAD_LIMITS.internalEnvelopeBytes);
  });
});

describe('assertMessageFitsReplies', () => {
  it('counts the first text part three times and refuses what a reply could not carry', () => {
    const message = {
      parts: [
        { kind: 'text' as const, text: 'x'.repeat(1000) },
        { kind: 'data' as const, data: { n: 1 } },
      ],
    };
    expect(messageReplyBytes(message)).toBe(Buffer.byteLength(JSON.stringify(message)) + 2 * 1002);
    expect(() => assertMessageFitsReplies(message, PAYLOAD_LIMITS.internalEnvelopeBytes + messageReplyBytes(message))).not.toThrow();
    expect(() => assertMessageFitsReplies(message, PAYLOAD_LIMITS.internalEnvelopeBytes + messageReplyBytes(message) - 1)).toThrow(
      expect.objectContaining({ reason: 'payload_too_large', data: expect.objectContaining({ field: 'message' }) }),
    );
  });
});

describe('metadataBoundsProblem', () => {
  it('names too many keys, too deep a nesting and too many bytes, and accepts what is within them', () => {
    expect(metadataBoundsProblem({ a: 1, b: [1, { c: 'd' }] })).toBeUndefined();
    const wide = Object.fromEntries(Array.from({ length: TASK_LIMITS.metadataKeysPerObject + 1 }, (_, index) => [`k${index}`, index]));
    expect(metadataBoundsProblem({ nested: wide })).toMatch(/more than 256 keys/);
    expect(metadataBoundsProblem({ list: Array.from({ length: TASK_LIMITS.metadataKeysPerObject + 1 }, () => 0) })).toMatch(/more than 256 keys/);
    let deep: Record<string, unknown> = {};
    for (let level = 1; level < TASK_LIMITS.metadataDepth; level += 1) deep = { d: deep };
    expect(metadataBoundsProblem(deep)).toBeUndefined();
    expect(metadataBoundsProblem({ d: deep })).toMatch(/deeper than 16 levels/);
    expect(metadataBoundsProblem({ text: 'x'.repeat(TASK_LIMITS.metadataBytes) })).toMatch(/at most 65536 bytes/);
  });
});
