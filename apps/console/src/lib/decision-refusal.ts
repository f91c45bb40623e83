import { fourEyesRefusal as refusalOf, type OwnedAgent } from '@app/contracts/model';
import type { ConsoleRole, SessionPerson, TaskHold } from '../api/types';
import { roleAllows } from './roles';

/** Who is deciding: their role, and the person of their sign-in (null for the admin token, which names no person). */
export interface Decider {
  role: ConsoleRole;
  person: SessionPerson | null;
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
  if (!roleAllows(decider.role, 'approver'))
    return `Your role (${decider.role}) may read held handoffs but not decide them: approving and denying need the approver role.`;
  if (!task.hold?.four_eyes) return null;
  return fourEyesRefusal(task.hold.rule, task.sender.handle, decider, sender, 'decide this handoff');
}

/** Why `role` may not answer tool prompts, or null when it may. */
export function toolPromptRoleRefusal(role: ConsoleRole): string | null {
  if (roleAllows(role, 'approver')) return null;
  return `Your role (${role}) may read tool prompts but not answer them: allowing and denying need the approver role.`;
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
  const byRole = toolPromptRoleRefusal(decider.role);
  if (byRole) return byRole;
  if (!prompt.four_eyes) return null;
  return fourEyesRefusal(prompt.rule, prompt.sender, decider, sender, 'answer this tool prompt');
}
