import { normalizeProtoJson, snakeToCamel } from './protojson';

describe('normalizeProtoJson', () => {
  it('turns snake_case keys into camelCase at every level', () => {
    expect(snakeToCamel('status_timestamp_after')).toBe('statusTimestampAfter');
    expect(
      normalizeProtoJson({
        history_length: 3,
        page_token: 'x',
        message: { message_id: 'm', context_id: 'c', parts: [{ media_type: 'text/plain', text: 'hi' }] },
        configuration: { return_immediately: true },
      }),
    ).toEqual({
      historyLength: 3,
      pageToken: 'x',
      message: { messageId: 'm', contextId: 'c', parts: [{ mediaType: 'text/plain', text: 'hi' }] },
      configuration: { returnImmediately: true },
    });
  });

  it('keeps camelCase keys and prefers them when both spellings are present', () => {
    expect(normalizeProtoJson({ historyLength: 2, history_length: 9 })).toEqual({ historyLength: 2 });
    expect(normalizeProtoJson({ history_length: 9, historyLength: 2 })).toEqual({ historyLength: 2 });
  });

  it('never rewrites client-owned maps (metadata, data, payload)', () => {
    const input = { metadata: { client_key: 1, nested_map: { a_b: 2 } }, message: { parts: [{ data: { snake_case: true } }], metadata: { x_y: 1 } } };
    expect(normalizeProtoJson(input)).toEqual(input);
  });

  it('leaves scalars and arrays of scalars alone', () => {
    expect(normalizeProtoJson([1, 'a_b', null])).toEqual([1, 'a_b', null]);
    expect(normalizeProtoJson('x_y')).toBe('x_y');
  });
});
