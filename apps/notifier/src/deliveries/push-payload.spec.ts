import { TASK_EVENT_SCHEMA_VERSION, type TaskEvent, type TaskEventType, type TaskState } from '@app/contracts';
import type { PushTarget } from '../targets/delivery-targets';
import { planPushDeliveries, pushBody } from './push-payload';

function event(type: TaskEventType, state: TaskState, from: string | null = null): TaskEvent {
  return {
    schema_version: TASK_EVENT_SCHEMA_VERSION,
    event_id: 'e1',
    type,
    task_id: 'T1',
    context_id: 'C1',
    sender: 'alice@acme',
    recipient: 'bob@acme',
    state,
    sequence_no: from ? 2 : null,
    occurred_at: '2026-01-01T00:00:00.000Z',
    task: {
      intent: 'inform',
      summary: 's',
      message_count: 2,
      latest_message: from ? { id: 'm2', sequence_no: 2, from, body: 'hello' } : null,
      result_summary: null,
      reason: null,
    },
  };
}

const target = (extra: Partial<PushTarget>): PushTarget => ({
  config_id: 'cfg',
  owner_handle: 'alice@acme',
  version: '1.0',
  url: 'https://client.example.com/hook',
  token: null,
  auth_scheme: null,
  auth_credentials: null,
  ...extra,
});

describe('A2A push payloads', () => {
  it('v1.0: task for a new task, message for a message, statusUpdate for a state change', () => {
    expect(pushBody(event('created', 'pending', 'alice@acme'), '1.0')).toEqual({
      task: {
        id: 'T1',
        contextId: 'C1',
        status: { state: 'TASK_STATE_SUBMITTED', timestamp: '2026-01-01T00:00:00.000Z' },
        history: [{ messageId: 'm2', taskId: 'T1', contextId: 'C1', role: 'ROLE_USER', parts: [{ text: 'hello' }] }],
      },
    });
    expect(pushBody(event('message_appended', 'accepted', 'bob@acme'), '1.0')).toEqual({
      message: { messageId: 'm2', taskId: 'T1', contextId: 'C1', role: 'ROLE_AGENT', parts: [{ text: 'hello' }] },
    });
    expect(pushBody(event('canceled', 'cancelled'), '1.0')).toEqual({
      statusUpdate: { taskId: 'T1', contextId: 'C1', status: { state: 'TASK_STATE_CANCELED', timestamp: '2026-01-01T00:00:00.000Z' } },
    });
  });

  it('v0.3: the task object with its lowercase state', () => {
    expect(pushBody(event('input_required', 'input_required'), '0.3')).toEqual({
      kind: 'task',
      id: 'T1',
      contextId: 'C1',
      status: { state: 'input-required', timestamp: '2026-01-01T00:00:00.000Z' },
      metadata: { event: 'a2a.task.input_required', event_id: 'e1' },
    });
    expect(pushBody(event('message_appended', 'accepted', 'bob@acme'), '0.3')).toMatchObject({
      status: { state: 'working' },
      history: [{ kind: 'message', role: 'agent', parts: [{ kind: 'text', text: 'hello' }] }],
    });
  });

  it('authenticates with the config: Authorization from scheme and credentials, the token as X-A2A-Notification-Token', () => {
    const [withAuth, withToken] = planPushDeliveries(event('completed', 'completed'), [
      target({ config_id: 'a', auth_scheme: 'Bearer', auth_credentials: 'xyz' }),
      target({ config_id: 'b', version: '0.3', token: 'tok' }),
    ]);
    expect(withAuth).toMatchObject({
      channel: 'push',
      target_ref: 'push:a',
      content_type: 'application/a2a+json',
      headers: { authorization: 'Bearer xyz' },
      event: 'a2a.task.completed',
    });
    expect(withToken).toMatchObject({ target_ref: 'push:b', content_type: 'application/json', headers: { 'x-a2a-notification-token': 'tok' } });
    expect(withToken.headers.authorization).toBeUndefined();
  });
});
