import type { UpstreamInterface, WireVersion } from '@app/contracts';

/** Where an agent wants to be told, as the directory's agent events last said. */
export interface AgentTarget {
  handle: string;
  name: string;
  notification_webhook_url: string | null;
  slack_webhook_url: string | null;
  /** The agent's own request timeout for its webhook and push configs; null: the notifier's default. */
  webhook_timeout_ms: number | null;
  /** For an agent that runs its own A2A server: where its handoffs are delivered. */
  upstream: UpstreamInterface | null;
  disabled: boolean;
}

/** An A2A push-notification config the notifier delivers to. */
export interface PushTarget {
  config_id: string;
  owner_handle: string;
  version: WireVersion;
  url: string;
  token: string | null;
  auth_scheme: string | null;
  auth_credentials: string | null;
}
