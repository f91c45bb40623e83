import { orgOf } from '../directory/handle';

/**
 * Where the approvers' Slack message of a held handoff or a tool prompt goes: the channel of the
 * org whose rule held it, the relay's channel, or nowhere.
 */
export type ApprovalsSlackRoute = { to: 'org'; org: string } | { to: 'relay' } | { to: 'none' };

export interface ApprovalsSlackChannels {
  /** Whether the holding org has its own approvals channel. */
  orgHasChannel: boolean;
  /** Whether the relay has its approvals channel (RELAY_APPROVALS_SLACK_WEBHOOK_URL). */
  relayHasChannel: boolean;
  /** RELAY_APPROVALS_SLACK_ORG_ONLY: the relay's channel hears of no org's handoffs. */
  orgOnly: boolean;
}

/**
 * The org whose rule held a handoff or gives its tool prompts to people: the recipient's, since hold
 * and tool-prompt rules are the recipient's trust policy's. The same org decides it (docs/orgs.md).
 */
export function holdingOrgOf(recipient: string): string {
  return orgOf(recipient);
}

/**
 * The approvers' Slack route of a handoff to `recipient`: its org's channel when it has one (never
 * also the relay's), else the relay's unless the relay keeps to org channels only.
 */
export function approvalsSlackRouteOf(recipient: string, channels: ApprovalsSlackChannels): ApprovalsSlackRoute {
  if (channels.orgHasChannel) return { to: 'org', org: holdingOrgOf(recipient) };
  if (channels.relayHasChannel && !channels.orgOnly) return { to: 'relay' };
  return { to: 'none' };
}
