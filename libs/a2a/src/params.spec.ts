import { parseCancelParams, parseCompleteParams, parseGetParams, parseListParams, parseSendParams, parseUpdateStatusParams } from './params';
import { invalidFieldOf } from './testing/invalid-field';

const message = { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'hi' }] };

describe('parseSendParams', () => {
  it('blocks by default, and not with returnImmediately (v1.0) or blocking: false (v0.3)', () => {
    expect(parseSendParams({ message }).blocking).toBe(true);
    expect(parseSendParams({ message, configuration: {} }).blocking).toBe(true);
    expect(parseSendParams({ message, configuration: { returnImmediately: true } }).blocking).toBe(false);
    expect(parseSendParams({ message, configuration: { return_immediately: true } }).blocking).toBe(false);
    expect(parseSendParams({ message, configuration: { blocking: false } }).blocking).toBe(false);
    expect(parseSendParams({ message, configuration: { blocking: true, acceptedOutputModes: [] } }).blocking).toBe(true);
  });

  it('finds the recipient in the param, the message metadata or the request metadata', () => {
    expect(parseSendParams({ message, recipient: 'frank@acme' }).recipient).toBe('frank@acme');
    expect(parseSendParams({ message: { ...message, metadata: { recipient: 'a@b' } } }).recipient).toBe('a@b');
    expect(parseSendParams({ message, metadata: { recipient: 'c@d' } }).recipient).toBe('c@d');
    expect(parseSendParams({ message }).recipient).toBeUndefined();
  });

  it('reads snake_case message fields and the history length', () => {
    const parsed = parseSendParams({
      message: { message_id: 'm', task_id: 't', context_id: 'c', parts: [{ text: 'x' }] },
      configuration: { history_length: 2 },
    });
    expect(parsed.message).toMatchObject({ messageId: 'm', taskId: 't', contextId: 'c' });
    expect(parsed.historyLength).toBe(2);
  });

  it('reads an inline push-notification config in either version', () => {
    expect(parseSendParams({ message, configuration: { taskPushNotificationConfig: { url: 'https://h/x', token: 't' } } }).pushConfig).toEqual({
      url: 'https://h/x',
      token: 't',
    });
    expect(parseSendParams({ message, configuration: { push_notification_config: { url: 'https://h/y' } } }).pushConfig).toEqual({ url: 'https://h/y' });
    expect(invalidFieldOf(() => parseSendParams({ message, configuration: { taskPushNotificationConfig: { url: 'nope' } } }))).toBe(
      'configuration.taskPushNotificationConfig.url',
    );
  });

  it('names bad fields', () => {
    expect(invalidFieldOf(() => parseSendParams({}))).toBe('message');
    expect(invalidFieldOf(() => parseSendParams({ message, configuration: { returnImmediately: 'yes' } }))).toBe('configuration.returnImmediately');
    expect(invalidFieldOf(() => parseSendParams({ message, recipient: 5 }))).toBe('recipient');
    expect(invalidFieldOf(() => parseSendParams([]))).toBe('params');
  });
});

describe('parseGetParams / parseCancelParams', () => {
  it('reads id and historyLength in both spellings', () => {
    expect(parseGetParams({ id: 't', historyLength: 0 })).toEqual({ id: 't', historyLength: 0 });
    expect(parseGetParams({ id: 't', history_length: '3' })).toEqual({ id: 't', historyLength: 3 });
    expect(parseCancelParams({ id: 't', metadata: { a: 1 } })).toEqual({ id: 't', metadata: { a: 1 } });
  });

  it('needs an id and a non-negative historyLength', () => {
    expect(invalidFieldOf(() => parseGetParams({}))).toBe('id');
    expect(invalidFieldOf(() => parseGetParams({ id: 't', historyLength: -1 }))).toBe('historyLength');
    expect(invalidFieldOf(() => parseCancelParams(undefined))).toBe('id');
  });
});

describe('parseListParams', () => {
  it('defaults pageSize to 50 and artifacts off', () => {
    expect(parseListParams({})).toEqual({ pageSize: 50, includeArtifacts: false });
    expect(parseListParams({ pageSize: 0 }).pageSize).toBe(50);
  });

  it('reads every filter in both spellings', () => {
    expect(
      parseListParams({
        page_size: 10,
        page_token: 'tok',
        context_id: 'c',
        status: 'TASK_STATE_WORKING',
        status_timestamp_after: '2026-01-01T00:00:00Z',
        history_length: 1,
        include_artifacts: true,
      }),
    ).toEqual({
      pageSize: 10,
      pageToken: 'tok',
      contextId: 'c',
      status: 'accepted',
      statusTimestampAfter: '2026-01-01T00:00:00.000Z',
      historyLength: 1,
      includeArtifacts: true,
    });
    expect(parseListParams({ status: 'TASK_STATE_UNSPECIFIED' })).not.toHaveProperty('status');
  });

  it('rejects out-of-range sizes, unknown states and bad timestamps', () => {
    expect(invalidFieldOf(() => parseListParams({ pageSize: 101 }))).toBe('pageSize');
    expect(invalidFieldOf(() => parseListParams({ status: 'TASK_STATE_NOPE' }))).toBe('status');
    expect(invalidFieldOf(() => parseListParams({ statusTimestampAfter: 'yesterday' }))).toBe('statusTimestampAfter');
  });
});

describe('agent-side methods', () => {
  it('reads CompleteTask with artifacts', () => {
    expect(parseCompleteParams({ id: 't', artifacts: [{ parts: [{ kind: 'text', text: 'Done!' }] }] })).toEqual({
      id: 't',
      artifacts: [{ parts: [{ kind: 'text', text: 'Done!' }], append: false, last_chunk: true }],
    });
  });

  it('reads UpdateStatus with a string message or a Message, and the implied state', () => {
    expect(parseUpdateStatusParams({ id: 't', status: { state: 'working', message: 'Processing step 2 of 5...' } })).toEqual({
      id: 't',
      state: 'accepted',
      message: { parts: [{ kind: 'text', text: 'Processing step 2 of 5...' }], body: 'Processing step 2 of 5...' },
      artifacts: [],
    });
    expect(
      parseUpdateStatusParams({
        id: 't',
        status: { state: 'TASK_STATE_INPUT_REQUIRED', message: { messageId: 'q', role: 'ROLE_AGENT', parts: [{ text: '?' }] } },
      }),
    ).toMatchObject({
      state: 'input_required',
      message: { messageId: 'q', role: 'agent', body: '?' },
    });
    expect(
      parseUpdateStatusParams({ id: 't', artifacts: [{ artifactId: 'a', parts: [{ text: 'chunk' }], append: true, lastChunk: false }] }).state,
    ).toBeUndefined();
  });

  it('rejects canceled and empty reports', () => {
    expect(invalidFieldOf(() => parseUpdateStatusParams({ id: 't', status: { state: 'canceled' } }))).toBe('status.state');
    expect(invalidFieldOf(() => parseUpdateStatusParams({ id: 't' }))).toBe('status');
  });
});
