import { parseSendParams } from './params';
import { protoSendToParams, pushConfigToProto, streamResponseToProto } from './rest-v03';

describe('v0.3 HTTP+JSON shapes', () => {
  it('reads a v0.3 proto SendMessageRequest through the message/send parser; no blocking flag is non-blocking', () => {
    const params = parseSendParams(
      protoSendToParams({
        message: {
          messageId: 'm1',
          role: 'ROLE_USER',
          content: [{ text: 'hi' }, { file: { fileWithUri: 'https://x.example/a.png', mimeType: 'image/png' } }, { data: { data: { k: 1 } } }],
        },
        configuration: { historyLength: 2 },
      }),
    );
    expect(params).toMatchObject({
      blocking: false,
      historyLength: 2,
      message: {
        messageId: 'm1',
        parts: [
          { kind: 'text', text: 'hi' },
          { kind: 'file', file: { uri: 'https://x.example/a.png', mime_type: 'image/png' } },
          { kind: 'data', data: { k: 1 } },
        ],
      },
    });
    expect(parseSendParams(protoSendToParams({ message: { role: 'ROLE_USER', content: [{ text: 'x' }] }, configuration: { blocking: true } })).blocking).toBe(
      true,
    );
  });

  it('renders v1.0 stream responses in the v0.3 proto shape: content, msg, CANCELLED, final', () => {
    const message = { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 't' }, { data: { a: 1 } }, { url: 'https://x.example/f', mediaType: 'text/plain' }] };
    expect(streamResponseToProto({ message })).toEqual({
      msg: {
        messageId: 'm',
        role: 'ROLE_AGENT',
        content: [{ text: 't' }, { data: { data: { a: 1 } } }, { file: { fileWithUri: 'https://x.example/f', mimeType: 'text/plain' } }],
      },
    });
    expect(streamResponseToProto({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_CANCELED' } } })).toEqual({
      statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_CANCELLED' }, final: true },
    });
    expect(streamResponseToProto({ statusUpdate: { taskId: 't', contextId: 'c', status: { state: 'TASK_STATE_WORKING' } } })).toMatchObject({
      statusUpdate: { final: false },
    });
    const task = streamResponseToProto({ task: { id: 't', status: { state: 'TASK_STATE_SUBMITTED', message }, history: [message] } });
    expect(task).toMatchObject({ task: { status: { message: { content: expect.any(Array) } }, history: [{ content: expect.any(Array) }] } });
  });

  it('renders a push config with its resource name and v0.3 authentication', () => {
    expect(pushConfigToProto({ id: 'c1', taskId: 'T1', url: 'https://h.example', authentication: { scheme: 'Bearer', credentials: '***' } })).toEqual({
      name: 'tasks/T1/pushNotificationConfigs/c1',
      pushNotificationConfig: { id: 'c1', url: 'https://h.example', authentication: { schemes: ['Bearer'], credentials: '***' } },
    });
  });
});
