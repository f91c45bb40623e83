import { describe, expect, it } from '@jest/globals';
import type { TaskHold, TimelineEntry } from '../api/types';
import { actorText, holdDecider, holdNotes, type HeldParties } from './hold-view';

const hold: TaskHold = {
  rule: 'external proposals',
  reason: 'held by rule external proposals',
  expires_at: '2026-01-02T00:00:00.000Z',
  four_eyes: true,
  outcome: 'held',
  decided_at: null,
  comment: null,
};
const parties = (changes: Partial<TaskHold> = {}): HeldParties => ({ hold: { ...hold, ...changes }, sender: 'bob@partner', recipient: 'ops@acme' });
const entry = (position: string, event: string, actor: string | null): TimelineEntry => ({
  position,
  event,
  actor,
  at: '2026-01-01T00:00:00.000Z',
  state: 'held',
});

describe('actorText', () => {
  it('names a person as recorded, the admin token and its console sessions as such, and the relay', () => {
    expect(['otto@acme.test', 'admin token', 'console:1a2b3c4d5e6f', 'relay', null].map(actorText)).toEqual([
      'otto@acme.test',
      'the admin token',
      'the admin token (console session 1a2b3c4d5e6f)',
      'the relay',
      'the relay',
    ]);
  });
});

describe('holdNotes', () => {
  it("says the relay held it under the recipient's rule, who sent it and who may decide", () => {
    const notes = holdNotes([entry('1', 'held', 'bob@partner')], parties());
    expect(notes.get('1')).toEqual({
      title: 'Held for approval',
      by: 'the relay',
      lines: [
        `The relay held it under the rule "external proposals" of ops@acme's trust policy; bob@partner sent it.`,
        'Who may decide: A person with the approver role (or operator or admin) in acme or relay-wide, signed in to the console as themselves (not with the admin token) and not the owner of bob@partner (four eyes).',
      ],
    });
  });

  it('says who approved it, under which rule and with what comment, on the event that delivered it', () => {
    const entries = [entry('1', 'held', 'bob@partner'), entry('2', 'created', 'console:1a2b3c4d5e6f'), entry('3', 'accepted', 'ops@acme')];
    const notes = holdNotes(entries, parties({ outcome: 'approved', comment: 'checked the migration' }));
    expect(notes.get('2')).toEqual({
      title: 'Approved and delivered',
      by: 'the admin token (console session 1a2b3c4d5e6f)',
      lines: [`Under the rule "external proposals" of ops@acme's trust policy.`, 'Comment: checked the migration', 'Delivered to ops@acme as if just sent.'],
    });
    expect(notes.has('3')).toBe(false);
  });

  it('says who denied it; an expiry is the relay', () => {
    const entries = [entry('1', 'held', 'bob@partner'), entry('2', 'rejected', 'otto@acme.test')];
    expect(holdNotes(entries, parties({ outcome: 'denied', comment: 'no' })).get('2')).toMatchObject({ title: 'Denied', by: 'otto@acme.test' });
    expect(holdNotes(entries, parties({ outcome: 'expired' })).get('2')).toMatchObject({ title: 'Expired', by: 'the relay' });
  });

  it('adds nothing to a task that was never held', () => {
    expect(holdNotes([entry('1', 'created', 'bob@partner')], null).size).toBe(0);
  });
});

describe('holdDecider', () => {
  it('names the actor of the audit row that took the task out of held, and nobody while it is held', () => {
    const created = { at: '2026-01-01T00:00:00.000Z', actor: 'bob@partner', action: 'create', from_state: null, to_state: 'held' as const };
    expect(holdDecider([created])).toBeNull();
    expect(holdDecider([created, { ...created, actor: 'otto@acme.test', action: 'approve', from_state: 'held', to_state: 'pending' }])).toBe('otto@acme.test');
  });
});
