import type { ConsoleRole, TaskHold } from '../api/types';
import { roleAllows } from './roles';

/** Who is deciding: their role, and their sign-in's email (`undefined` for the admin token, which names no person). */
export interface Decider {
  role: ConsoleRole;
  email: string | null | undefined;
}

/** Why four eyes keep `decider` from doing `act` on what `sender` sent under `rule`, or null when they may. */
function fourEyesRefusal(rule: string, sender: string, decider: Decider, ownerEmail: string | null | undefined, act: string): string | null {
  if (decider.email === undefined) return `The rule "${rule}" needs four eyes: sign in as a person (not with the admin token) to ${act}.`;
  if (decider.email && ownerEmail && decider.email.toLowerCase() === ownerEmail.toLowerCase())
    return `The rule "${rule}" needs four eyes: you own ${sender}, the sending agent, so another person must ${act}.`;
  return null;
}

/**
 * Why `decider` may not decide this held handoff, or null when they may. The relay refuses the
 * same cases (403 `role_forbidden`, 403 `four_eyes`), so the console does not offer what it would
 * refuse; `ownerEmail` is the sending agent's `email` (its owner).
 */
export function decisionRefusal(
  task: { hold: TaskHold | null; sender: { handle: string } },
  decider: Decider,
  ownerEmail: string | null | undefined,
): string | null {
  if (!roleAllows(decider.role, 'approver'))
    return `Your role (${decider.role}) may read held handoffs but not decide them: approving and denying need the approver role.`;
  if (!task.hold?.four_eyes) return null;
  return fourEyesRefusal(task.hold.rule, task.sender.handle, decider, ownerEmail, 'decide this handoff');
}

/** Why `role` may not answer tool prompts, or null when it may. */
export function toolPromptRoleRefusal(role: ConsoleRole): string | null {
  if (roleAllows(role, 'approver')) return null;
  return `Your role (${role}) may read tool prompts but not answer them: allowing and denying need the approver role.`;
}

/**
 * Why `decider` may not answer this tool prompt, or null when they may: the same cases as a held
 * handoff's decision, which the relay refuses the same way; `ownerEmail` is the sending agent's owner.
 */
export function toolPromptRefusal(
  prompt: { rule: string; four_eyes: boolean; sender: string },
  decider: Decider,
  ownerEmail: string | null | undefined,
): string | null {
  const byRole = toolPromptRoleRefusal(decider.role);
  if (byRole) return byRole;
  if (!prompt.four_eyes) return null;
  return fourEyesRefusal(prompt.rule, prompt.sender, decider, ownerEmail, 'answer this tool prompt');
}
