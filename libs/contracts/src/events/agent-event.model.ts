import type { UpstreamInterface } from '../upstream/upstream.contract';

/** JetStream subject of the directory's agent events (not a request subject). */
export const AGENT_UPDATED_EVENT_SUBJECT = 'relay.events.agent.updated';

export const AGENT_EVENT_SCHEMA_VERSION = 1;

/**
 * Published by the directory on `relay.events.agent.updated` after every agent create, update or
 * disable, with `Nats-Msg-Id` = `event_id`. The notifier keeps its delivery targets from these.
 * The event carries the agent's whole current delivery profile, so the latest event wins.
 */
export interface AgentUpdatedEvent {
  event_id: string;
  agent_id: string;
  handle: string;
  name: string;
  notification_webhook_url: string | null;
  slack_webhook_url: string | null;
  /** The agent's own timeout of each request to its webhook and push configs; null (or absent, in older events): the notifier's default. */
  webhook_timeout_ms?: number | null;
  /** The agent's A2A server, for an upstream agent (null, or absent in older events: none). */
  upstream?: UpstreamInterface | null;
  disabled: boolean;
  /** ISO-8601 time of the change; the notifier ignores an event older than what it holds. */
  occurred_at: string;
}
