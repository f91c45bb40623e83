import { fourEyesRefusal as refusalOf, type OwnedAgent } from '@app/contracts/model';
import type { ConsoleRole, SessionPerson, TaskHold } from '../api/types';
import { roleAllows } from './roles';

/**
 * Who is deciding: their role where the decision is taken, and the person of their sign-in (null
 * for the admin token, which names no person). `org` is the org whose rule held what is decided,
 * when the role is that org's own (or null: the person has none there); absent for a relay-wide role.
 */
export interface Decider {
  role: ConsoleRole | null;
  person: SessionPerson | null;
  org?: string;
}

/** What needs an approver, in words: what a weaker role may read, and what it may not do. */
const APPROVER_ACTS = {
  handoff: { reads: 'held handoffs', may: 'decide them', acts: 'approving and denying', holder: 'decide this handoff' },
  tool_prompt: { reads: 'tool prompts', may: 'answer them', acts: 'allowing and denying', holder: 'answer this tool prompt' },
} as const;

/** Why the decider's role keeps them from what needs an approver, or null when it does not. */
function roleRefusal(decider: Decider, what: keyof typeof APPROVER_ACTS): string | null {
  const words = APPROVER_ACTS[what];
  if (decider.role === null) return `Only people with a role in ${decider.org ?? 'its org'}, whose rule held it, may ${words.holder}: you have none there.`;
  if (roleAllows(decider.role, 'approver')) return null;
  const yours = decider.org === undefined ? `Your role (${decider.role})` : `Your role in ${decider.org} (${decider.role})`;
  return `${yours} may read ${words.reads} but not ${words.may}: ${words.acts} need the approver role.`;
}

/** Why four eyes keep `decider` from doing `act` on what `sender` sent under `rule`, or null when they may (the relay's own rule). */
function fourEyesRefusal(rule: string, sender: string, decider: Decider, owned: OwnedAgent | undefined, act: string): string | null {
  if (!decider.person) return `The rule "${rule}" needs four eyes: sign in as a person (not with the admin token) to ${act}.`;
  if (!owned) return null;
  switch (refusalOf(owned, decider.person)) {
    case null:
      return null;
    case 'admin_token':
      return `The rule "${rule}" needs four eyes: sign in as a person (not with the admin token) to ${act}.`;
    case 'no_owner':
      return `The rule "${rule}" needs four eyes, and ${sender}, the sending agent, has no owner on record: an admin records its owner before anyone may ${act}.`;
    case 'owner':
      return `The rule "${rule}" needs four eyes: you own ${sender}, the sending agent, so another person must ${act}.`;
    case 'unverifiable':
      return `The rule "${rule}" needs four eyes: ${sender}'s owner is known only by a verified email and your sign-in has none, so another person must ${act}.`;
  }
}

/**
 * Why `decider` may not decide this held handoff, or null when they may. The relay refuses the
 * same cases (403 `role_forbidden`, 403 `four_eyes`), so the console does not offer what it would
 * refuse; `sender` is the sending agent's record (its owner), undefined while it is read.
 */
export function decisionRefusal(task: { hold: TaskHold | null; sender: { handle: string } }, decider: Decider, sender: OwnedAgent | undefined): string | null {
  const byRole = roleRefusal(decider, 'handoff');
  if (byRole) return byRole;
  if (!task.hold?.four_eyes) return null;
  return fourEyesRefusal(task.hold.rule, task.sender.handle, decider, sender, 'decide this handoff');
}

/** Why `role` may not answer tool prompts, or null when it may. */
export function toolPromptRoleRefusal(role: ConsoleRole): string | null {
  return roleRefusal({ role, person: null }, 'tool_prompt');
}

/**
 * Why `decider` may not answer this tool prompt, or null when they may: the same cases as a held
 * handoff's decision, which the relay refuses the same way; `sender` is the sending agent's record.
 */
export function toolPromptRefusal(
  prompt: { rule: string; four_eyes: boolean; sender: string },
  decider: Decider,
  sender: OwnedAgent | undefined,
): string | null {
  const byRole = roleRefusal(decider, 'tool_prompt');
  if (byRole) return byRole;
  if (!prompt.four_eyes) return null;
  return fourEyesRefusal(prompt.rule, prompt.sender, decider, sender, 'answer this tool prompt');
}
