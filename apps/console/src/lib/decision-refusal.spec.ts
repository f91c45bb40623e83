import { describe, expect, it } from '@jest/globals';
import type { OwnedAgent } from '@app/contracts/model';
import type { SessionPerson, TaskHold } from '../api/types';
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

const ISSUER = 'https://idp.acme.test';
const person = (sub: string, email: string | null, verified = email !== null): SessionPerson => ({
  issuer: ISSUER,
  sub,
  email,
  email_verified: verified,
  name: null,
});
const ann = person('ann', 'ann@acme.test');
const owen = person('owen', null);
const bob: OwnedAgent = { owner: { issuer: ISSUER, subject: 'owen' }, email: 'owen@partner.test', email_verified: false };
const ownerless: OwnedAgent = { owner: null, email: 'owen@partner.test', email_verified: false };

describe('who the console offers a decision on a held handoff', () => {
  it('offers it to an approver, an operator and an admin, not to a viewer or an auditor', () => {
    for (const role of ['approver', 'operator', 'admin'] as const) expect(decisionRefusal(task(false), { role, person: ann }, undefined)).toBeNull();
    expect(decisionRefusal(task(false), { role: 'viewer', person: person('vera', 'vera@acme.test') }, undefined)).toMatch(
      /Your role \(viewer\) may read held handoffs but not decide/,
    );
    expect(decisionRefusal(task(false), { role: 'auditor', person: null }, undefined)).toMatch(/Your role \(auditor\)/);
  });

  it("names the org whose rule held it for a role of that org's own, or for none there", () => {
    expect(decisionRefusal(task(false), { role: 'approver', org: 'acme', person: ann }, undefined)).toBeNull();
    expect(decisionRefusal(task(false), { role: 'viewer', org: 'acme', person: ann }, undefined)).toBe(
      'Your role in acme (viewer) may read held handoffs but not decide them: approving and denying need the approver role.',
    );
    expect(decisionRefusal(task(false), { role: null, org: 'acme', person: ann }, undefined)).toBe(
      'Only people with a role in acme, whose rule held it, may decide this handoff: you have none there.',
    );
    expect(toolPromptRefusal({ rule: 'outside senders', four_eyes: false, sender: 'bob@partner' }, { role: null, org: 'acme', person: ann }, undefined)).toBe(
      'Only people with a role in acme, whose rule held it, may answer this tool prompt: you have none there.',
    );
  });

  it("with four eyes, refuses the sending agent's owner by their account (with no email), an agent with no owner on record, and the admin token", () => {
    expect(decisionRefusal(task(true), { role: 'approver', person: owen }, bob)).toMatch(/you own bob@partner, the sending agent/);
    expect(decisionRefusal(task(true), { role: 'approver', person: ann }, ownerless)).toMatch(/bob@partner, the sending agent, has no owner on record/);
    expect(decisionRefusal(task(true), { role: 'admin', person: null }, bob)).toMatch(/not with the admin token/);
    expect(decisionRefusal(task(true), { role: 'approver', person: ann }, bob)).toBeNull();
    // An unverified email that matches the agent's is not its owner's account.
    expect(decisionRefusal(task(true), { role: 'approver', person: person('ursula', 'owen@partner.test', false) }, bob)).toBeNull();
    // Without four eyes the admin token and the owner may decide.
    expect(decisionRefusal(task(false), { role: 'admin', person: null }, bob)).toBeNull();
    expect(decisionRefusal(task(false), { role: 'approver', person: owen }, bob)).toBeNull();
  });
});

describe('who the console offers an answer to a tool prompt', () => {
  const prompt = (fourEyes: boolean) => ({ rule: 'outside senders', four_eyes: fourEyes, sender: 'bob@partner' });

  it('offers it to an approver, an operator and an admin, not to a viewer or an auditor', () => {
    for (const role of ['approver', 'operator', 'admin'] as const) {
      expect(toolPromptRoleRefusal(role)).toBeNull();
      expect(toolPromptRefusal(prompt(false), { role, person: ann }, undefined)).toBeNull();
    }
    for (const role of ['viewer', 'auditor'] as const) {
      const refusal = `Your role (${role}) may read tool prompts but not answer them: allowing and denying need the approver role.`;
      expect(toolPromptRoleRefusal(role)).toBe(refusal);
      expect(toolPromptRefusal(prompt(true), { role, person: person('vera', 'vera@acme.test') }, bob)).toBe(refusal);
    }
  });

  it("with four eyes, refuses the sending agent's owner, an agent with no owner on record and the admin token", () => {
    expect(toolPromptRefusal(prompt(true), { role: 'approver', person: owen }, bob)).toBe(
      'The rule "outside senders" needs four eyes: you own bob@partner, the sending agent, so another person must answer this tool prompt.',
    );
    expect(toolPromptRefusal(prompt(true), { role: 'admin', person: null }, bob)).toBe(
      'The rule "outside senders" needs four eyes: sign in as a person (not with the admin token) to answer this tool prompt.',
    );
    expect(toolPromptRefusal(prompt(true), { role: 'approver', person: ann }, ownerless)).toMatch(/has no owner on record/);
    expect(toolPromptRefusal(prompt(true), { role: 'approver', person: ann }, bob)).toBeNull();
    expect(toolPromptRefusal(prompt(false), { role: 'admin', person: null }, bob)).toBeNull();
    expect(toolPromptRefusal(prompt(false), { role: 'approver', person: owen }, bob)).toBeNull();
  });
});
