import 'reflect-metadata';
import type { ArgumentMetadata } from '@nestjs/common';
import { GetRequest, ListRequest, RelayError, SendRequest } from '@app/contracts';
import { ContractGuardPipe } from './contract-guard.pipe';

const pipe = new ContractGuardPipe();
const asPayload = (metatype: ArgumentMetadata['metatype']): ArgumentMetadata => ({ type: 'body', metatype });

const caller = { id: '01AGENT', handle: 'alice@acme', name: 'Alice', role: null };
const send = {
  caller,
  recipient: { id: '01BOB', handle: 'bob@acme', name: 'Bob', role: null },
  message: { message_id: 'm-1', parts: [{ kind: 'text', text: 'hello' }] },
  intent: 'ask_question',
};

function refusal(value: unknown, metatype: ArgumentMetadata['metatype'] = SendRequest): RelayError {
  try {
    pipe.transform(value, asPayload(metatype));
  } catch (error) {
    expect(error).toBeInstanceOf(RelayError);
    return error as RelayError;
  }
  throw new Error('the payload was accepted');
}

describe('ContractGuardPipe', () => {
  it('passes a payload of its contract through unchanged (the same object, not a copy)', () => {
    expect(pipe.transform(send, asPayload(SendRequest))).toBe(send);
    const get = { caller_id: '01AGENT', task_id: '01TASK', history_length: 5 };
    expect(pipe.transform(get, asPayload(GetRequest))).toBe(get);
  });

  it('refuses a field the contract does not have', () => {
    const error = refusal({ ...send, recipient_handle: 'bob@acme' });
    expect(error.reason).toBe('invalid_params');
    expect(error.data).toEqual({ field: 'recipient_handle' });
  });

  it('refuses a missing required field, and lets an optional one be absent or null', () => {
    const withoutMessage: Record<string, unknown> = { ...send };
    delete withoutMessage.message;
    expect(refusal(withoutMessage).message).toBe('message: is required');
    expect(pipe.transform({ ...send, intent: undefined, proposed_action: null }, asPayload(SendRequest))).toBeDefined();
  });

  it('refuses a field of the wrong JSON type, naming it', () => {
    expect(refusal({ caller_id: '01AGENT', task_id: 42 }, GetRequest).data).toEqual({ field: 'task_id' });
    expect(refusal({ caller_id: '01AGENT', task_id: '01TASK', history_length: 2.5 }, GetRequest).message).toBe('history_length: must be an integer');
    expect(refusal({ ...send, message: 'hello' }).message).toBe('message: must be an object');
    expect(refusal({ ...send, artifacts: [{ parts: [] }, 'x'] }).data).toEqual({ field: 'artifacts[1]' });
  });

  it('refuses a value outside an enumerated set', () => {
    expect(refusal({ ...send, intent: 'shout' }).message).toBe('intent: is not one of the allowed values');
  });

  it('holds each item of a list to its enumerated set', () => {
    const list = { caller_id: '01AGENT', role: 'recipient', states: ['pending', 'accepted'] };
    expect(pipe.transform(list, asPayload(ListRequest))).toBe(list);
    expect(refusal({ ...list, states: ['pending', 'asleep'] }, ListRequest).data).toEqual({ field: 'states[1]' });
  });

  it('refuses the empty string where the contract says not empty, even for an optional field', () => {
    expect(refusal({ caller_id: '', task_id: '01TASK' }, GetRequest).message).toBe('caller_id: must not be empty');
    expect(refusal({ caller_id: '01AGENT', task_id: '01TASK', counterpart_id: '' }, GetRequest).data).toEqual({ field: 'counterpart_id' });
  });

  it('guards a nested contract object one level down', () => {
    expect(refusal({ ...send, caller: { ...caller, handle: 7 } }).data).toEqual({ field: 'caller.handle' });
    expect(refusal({ ...send, caller: { ...caller, admin: true } }).data).toEqual({ field: 'caller.admin' });
  });

  it('refuses a payload that is not an object', () => {
    expect(refusal('send').message).toBe('The request must be an object');
    expect(refusal([send]).message).toBe('The request must be an object');
  });

  it('leaves values alone that are not described by a contract class', () => {
    expect(pipe.transform('anything', asPayload(String))).toBe('anything');
    expect(pipe.transform({ any: 1 }, asPayload(Object))).toEqual({ any: 1 });
    expect(pipe.transform({ any: 1 }, { type: 'custom', metatype: SendRequest })).toEqual({ any: 1 });
  });
});
