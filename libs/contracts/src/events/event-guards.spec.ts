import { isAgentEvent, isPushConfigEvent, isTaskEvent } from './event-guards';

const taskEvent = {
  schema_version: 1,
  event_id: 'e1',
  type: 'completed',
  task_id: 'T1',
  context_id: 'C1',
  sender: 'alice@acme',
  recipient: 'bob@acme',
  state: 'completed',
  sequence_no: null,
  occurred_at: '2026-01-01T00:00:00.000Z',
  task: { intent: 'inform', summary: 's', message_count: 1, latest_message: null, result_summary: null, reason: null },
};

describe('event guards', () => {
  it('takes a task event with the fields a reader relies on, and nothing else', () => {
    expect(isTaskEvent(taskEvent)).toBe(true);
    for (const value of [null, 'x', 3, [], {}, { ...taskEvent, type: 'exploded' }, { ...taskEvent, task: null }, { ...taskEvent, task_id: 7 }])
      expect(isTaskEvent(value)).toBe(false);
  });

  it('takes a push config event (a deletion needs no URL) and an agent event', () => {
    const config = {
      event_id: 'e2',
      task_id: 'T1',
      config_id: 'c1',
      owner: 'alice@acme',
      version: '1.0',
      deleted: false,
      occurred_at: 'now',
      url: 'https://h',
    };
    expect(isPushConfigEvent(config)).toBe(true);
    expect(isPushConfigEvent({ ...config, url: undefined })).toBe(false);
    expect(isPushConfigEvent({ ...config, url: undefined, deleted: true })).toBe(true);
    expect(isPushConfigEvent({ ...config, version: '2.0' })).toBe(false);
    const agent = { event_id: 'e3', agent_id: 'a1', handle: 'bob@acme', occurred_at: 'now', disabled: false };
    expect(isAgentEvent(agent)).toBe(true);
    expect(isAgentEvent({ ...agent, disabled: 'no' })).toBe(false);
    expect(isAgentEvent(null)).toBe(false);
  });
});
