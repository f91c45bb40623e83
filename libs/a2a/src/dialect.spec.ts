import { RelayError } from '@app/contracts';
import { canonicalMethod, chooseDialect, negotiateVersion } from './dialect';

describe('negotiateVersion', () => {
  it.each([
    [undefined, '0.3'],
    ['', '0.3'],
    ['  ', '0.3'],
    ['0.3', '0.3'],
    ['0.3.0', '0.3'],
    ['1.0', '1.0'],
    ['1.0.2', '1.0'],
    [['1.0'], '1.0'],
  ])('reads %p as %s', (header, expected) => {
    expect(negotiateVersion(header as string | undefined)).toBe(expected);
  });

  it.each(['0.5', '2.0', '1', '1.1', 'latest', '1.0-beta'])('rejects %s with version_not_supported', (header) => {
    let thrown: unknown;
    try {
      negotiateVersion(header);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RelayError);
    expect((thrown as RelayError).reason).toBe('version_not_supported');
  });
});

describe('canonicalMethod', () => {
  it('accepts both spellings of every method', () => {
    expect(canonicalMethod('message/send')).toBe('send');
    expect(canonicalMethod('SendMessage')).toBe('send');
    expect(canonicalMethod('tasks/resubscribe')).toBe('resubscribe');
    expect(canonicalMethod('SubscribeToTask')).toBe('resubscribe');
    expect(canonicalMethod('tasks/complete')).toBe('complete');
    expect(canonicalMethod('UpdateStatus')).toBe('update_status');
    expect(canonicalMethod('ListTaskPushNotificationConfigs')).toBe('push_config_list');
  });

  it('knows no other method, nor inherited object keys', () => {
    expect(canonicalMethod('tasks/delete')).toBeUndefined();
    expect(canonicalMethod('toString')).toBeUndefined();
    expect(canonicalMethod('__proto__')).toBeUndefined();
  });
});

describe('chooseDialect', () => {
  it('answers a 1.0 request in A2A v1.0 even with task_id in its params', () => {
    expect(chooseDialect('1.0', 'get', { task_id: 'x' })).toEqual({ kind: 'a2a', version: '1.0' });
    expect(chooseDialect('1.0', 'list', {})).toEqual({ kind: 'a2a', version: '1.0' });
  });

  it('answers tasks/update and tasks/list without a 1.0 header in AgentRelay shapes', () => {
    expect(chooseDialect('0.3', 'update', {})).toEqual({ kind: 'agentrelay' });
    expect(chooseDialect('0.3', 'list', { pageSize: 2 })).toEqual({ kind: 'agentrelay' });
  });

  it('keeps ListTasks standard A2A without a 1.0 header, unless it carries AgentRelay params', () => {
    expect(chooseDialect('0.3', 'list', { pageSize: 2 }, 'ListTasks')).toEqual({ kind: 'a2a', version: '0.3' });
    expect(chooseDialect('0.3', 'list', { filter: { role: 'sender' } }, 'ListTasks')).toEqual({ kind: 'agentrelay' });
    expect(chooseDialect('0.3', 'list', { pageSize: 2 }, 'tasks/list')).toEqual({ kind: 'agentrelay' });
  });

  it('recognises the AgentRelay params', () => {
    expect(chooseDialect('0.3', 'send', { recipient: 'frank@acme', message: { parts: [] } })).toEqual({ kind: 'agentrelay' });
    expect(chooseDialect('0.3', 'get', { task_id: '01H' })).toEqual({ kind: 'agentrelay' });
    expect(chooseDialect('0.3', 'send', { message: { parts: [{ type: 'text', text: 'hi' }] } })).toEqual({ kind: 'agentrelay' });
    expect(chooseDialect('0.3', 'cancel', { task_id: '01H' })).toEqual({ kind: 'agentrelay' });
  });

  it('answers a plain v0.3 request in A2A v0.3', () => {
    expect(chooseDialect('0.3', 'send', { message: { kind: 'message', parts: [{ kind: 'text', text: 'hi' }] } })).toEqual({
      kind: 'a2a',
      version: '0.3',
    });
    expect(chooseDialect('0.3', 'get', { id: 'x' })).toEqual({ kind: 'a2a', version: '0.3' });
    expect(chooseDialect('0.3', 'get', undefined)).toEqual({ kind: 'a2a', version: '0.3' });
  });
});
