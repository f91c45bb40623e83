import { orgOf, trustEntryMatches, type AdmissionPolicy } from '@app/contracts';

export interface TrustLists {
  allow: readonly string[];
  block: readonly string[];
}

export type AdmissionDecision = { admitted: true } | { admitted: false; policy: AdmissionPolicy };

/**
 * Whether a recipient admits a sender. `block` always wins; teammates (same org) are admitted
 * unless blocked; senders from another org only when `allow` names them (handle or `*@org`).
 */
export function decideAdmission(sender: string, recipient: string, policy: TrustLists | null): AdmissionDecision {
  const lists = policy ?? { allow: [], block: [] };
  if (lists.block.some((entry) => trustEntryMatches(entry, sender))) return { admitted: false, policy: 'blocked' };
  if (orgOf(sender) === orgOf(recipient)) return { admitted: true };
  if (lists.allow.some((entry) => trustEntryMatches(entry, sender))) return { admitted: true };
  return { admitted: false, policy: 'not_allowed' };
}
