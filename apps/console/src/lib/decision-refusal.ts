import type { ConsoleRole, TaskHold } from '../api/types';
import { roleAllows } from './roles';

/** Who is deciding: their role, and their sign-in's email (`undefined` for the admin token, which names no person). */
export interface Decider {
  role: ConsoleRole;
  email: string | null | undefined;
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
  if (decider.email === undefined)
    return `The rule "${task.hold.rule}" needs four eyes: sign in as a person (not with the admin token) to decide this handoff.`;
  if (decider.email && ownerEmail && decider.email.toLowerCase() === ownerEmail.toLowerCase())
    return `The rule "${task.hold.rule}" needs four eyes: you own ${task.sender.handle}, the sending agent, so another person must decide this handoff.`;
  return null;
}
