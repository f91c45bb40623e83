import { z } from 'zod';
import { upstreamInterfaceSchema } from '../upstream/upstream.model';

/** JetStream subject of the directory's agent events (not a request subject). */
export const AGENT_UPDATED_EVENT_SUBJECT = 'relay.events.agent.updated';

export const AGENT_EVENT_SCHEMA_VERSION = 1;

/**
 * Published by the directory on `relay.events.agent.updated` after every agent create, update or
 * disable, with `Nats-Msg-Id` = `event_id`. The notifier keeps its delivery targets from these.
 * The event carries the agent's whole current delivery profile, so the latest event wins.
 */
export const agentUpdatedEventSchema = z
  .object({
    event_id: z.uuid().meta({ description: 'UUID, also the `Nats-Msg-Id` and the CloudEvents `id`.' }),
    agent_id: z.string().meta({ description: 'The agent; the CloudEvents `subject`.' }),
    handle: z.string(),
    name: z.string(),
    notification_webhook_url: z.string().nullable(),
    slack_webhook_url: z.string().nullable(),
    /** The agent's own timeout of each request to its webhook and push configs; null (or absent, in older events): the notifier's default. */
    webhook_timeout_ms: z
      .number()
      .int()
      .nullable()
      .optional()
      .meta({ description: "The agent's own timeout of each request to its webhook and push configs; null (or absent, in older events): the default." }),
    upstream: upstreamInterfaceSchema
      .nullable()
      .optional()
      .meta({ description: "The agent's own A2A server, for an upstream agent (null, or absent in older events: none)." }),
    disabled: z.boolean(),
    /** ISO-8601 time of the change; the notifier ignores an event older than what it holds. */
    occurred_at: z.iso.datetime().meta({ description: 'ISO-8601 time of the change; keep the newest per agent. The CloudEvents `time`.' }),
  })
  .meta({
    title: 'AgentUpdatedEvent',
    description: "An agent was created, updated or disabled: the agent's whole current delivery profile (the newest by occurred_at wins).",
  });
export type AgentUpdatedEvent = z.infer<typeof agentUpdatedEventSchema>;
