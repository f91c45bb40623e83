import { describe, expect, it } from '@jest/globals';
import type { TaskHold } from '../api/types';
import { decisionRefusal, toolPromptRefusal, toolPromptRoleRefusal } from './decision-refusal';

const hold = (fourEyes: boolean): TaskHold => ({
  rule: 'external proposals',
  reason: 'Held for approval',
  expires_at: '2026-01-02T00:00:00.000Z',
  four_eyes: fourEyes,
  outcome: 'held',
  decided_at: null,
  comment: null,
});
const task = (fourEyes: boolean) => ({ hold: hold(fourEyes), sender: { handle: 'bob@partner', name: 'Bob', role: null } });

describe('who the console offers a decision on a held handoff', () => {
  it('offers it to an approver, an operator and an admin, not to a viewer or an auditor', () => {
    for (const role of ['approver', 'operator', 'admin'] as const) expect(decisionRefusal(task(false), { role, email: 'ann@acme.test' }, null)).toBeNull();
    expect(decisionRefusal(task(false), { role: 'viewer', email: 'vera@acme.test' }, null)).toMatch(
      /Your role \(viewer\) may read held handoffs but not decide/,
    );
    expect(decisionRefusal(task(false), { role: 'auditor', email: null }, null)).toMatch(/Your role \(auditor\)/);
  });

  it("with four eyes, refuses the sending agent's owner (whatever the case of the email) and the admin token", () => {
    expect(decisionRefusal(task(true), { role: 'approver', email: 'Owen@Partner.test' }, 'owen@partner.test')).toMatch(
      /you own bob@partner, the sending agent/,
    );
    expect(decisionRefusal(task(true), { role: 'admin', email: undefined }, 'owen@partner.test')).toMatch(/not with the admin token/);
    expect(decisionRefusal(task(true), { role: 'approver', email: 'ann@acme.test' }, 'owen@partner.test')).toBeNull();
    expect(decisionRefusal(task(true), { role: 'approver', email: null }, null)).toBeNull();
    // Without four eyes the admin token and the owner may decide.
    expect(decisionRefusal(task(false), { role: 'admin', email: undefined }, 'owen@partner.test')).toBeNull();
    expect(decisionRefusal(task(false), { role: 'approver', email: 'owen@partner.test' }, 'owen@partner.test')).toBeNull();
  });
});

describe('who the console offers an answer to a tool prompt', () => {
  const prompt = (fourEyes: boolean) => ({ rule: 'outside senders', four_eyes: fourEyes, sender: 'bob@partner' });

  it('offers it to an approver, an operator and an admin, not to a viewer or an auditor', () => {
    for (const role of ['approver', 'operator', 'admin'] as const) {
      expect(toolPromptRoleRefusal(role)).toBeNull();
      expect(toolPromptRefusal(prompt(false), { role, email: 'ann@acme.test' }, null)).toBeNull();
    }
    for (const role of ['viewer', 'auditor'] as const) {
      const refusal = `Your role (${role}) may read tool prompts but not answer them: allowing and denying need the approver role.`;
      expect(toolPromptRoleRefusal(role)).toBe(refusal);
      expect(toolPromptRefusal(prompt(true), { role, email: 'vera@acme.test' }, 'owen@partner.test')).toBe(refusal);
    }
  });

  it("with four eyes, refuses the sending agent's owner (whatever the case of the email) and the admin token", () => {
    expect(toolPromptRefusal(prompt(true), { role: 'approver', email: 'Owen@Partner.test' }, 'owen@partner.test')).toBe(
      'The rule "outside senders" needs four eyes: you own bob@partner, the sending agent, so another person must answer this tool prompt.',
    );
    expect(toolPromptRefusal(prompt(true), { role: 'admin', email: undefined }, 'owen@partner.test')).toBe(
      'The rule "outside senders" needs four eyes: sign in as a person (not with the admin token) to answer this tool prompt.',
    );
    expect(toolPromptRefusal(prompt(true), { role: 'approver', email: 'ann@acme.test' }, 'owen@partner.test')).toBeNull();
    expect(toolPromptRefusal(prompt(true), { role: 'approver', email: null }, null)).toBeNull();
    expect(toolPromptRefusal(prompt(false), { role: 'admin', email: undefined }, 'owen@partner.test')).toBeNull();
    expect(toolPromptRefusal(prompt(false), { role: 'approver', email: 'owen@partner.test' }, 'owen@partner.test')).toBeNull();
  });
});
