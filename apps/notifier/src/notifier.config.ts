import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, ValidateBy, ValidateIf } from 'class-validator';
import { DatabaseServiceConfig, toBoolean } from '@app/config';
import { IsAssertionSigningKey, IsNotifierSealingKeys, IsSecretKeyList } from '@app/secrets';
import { AllowedNetworks, type PrivateTargets } from './outbound/ssrf-guard';

const UPSTREAM_ALLOWED_NETWORKS = 'RELAY_UPSTREAM_ALLOWED_NETWORKS';

/** The reason `AllowedNetworks.parse` refuses a list, or null. */
function allowedNetworksProblem(value: unknown, setting: string): string | null {
  if (typeof value !== 'string') return `${setting} must be a comma-separated list`;
  try {
    AllowedNetworks.parse(value, setting);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

export class NotifierConfig extends DatabaseServiceConfig {
  override METRICS_PORT = 9467;

  /** Keys that seal webhook secrets and push credentials at rest: `id:base64key,…`, the first one seals. */
  @IsSecretKeyList()
  RELAY_SECRET_KEYS: string;

  /**
   * The notifier's X25519 keys that open what other services seal to it over NATS (upstream
   * credentials and client keys, webhook secrets, push tokens): `id:base64url,…`; the others seal to
   * the first one's public half (RELAY_NOTIFIER_PUBLIC_KEY).
   */
  @IsNotifierSealingKeys()
  RELAY_NOTIFIER_SEALING_KEYS: string;

  /**
   * The P-256 key (`id:base64url`) the notifier signs each delivery's assertion of who asked with
   * (docs/chains.md#who-asked-signed); the edge publishes its public half among RELAY_ASSERTION_PUBLIC_KEYS.
   */
  @IsAssertionSigningKey()
  RELAY_ASSERTION_SIGNING_KEY: string;

  /** How long a delivery's assertion is valid after it is signed (each attempt signs anew). */
  @IsInt()
  @Min(30)
  @Max(3600)
  RELAY_ASSERTION_TTL_SECONDS: number = 300;

  /**
   * Delays between the attempts of a delivery (after the first one), e.g. `5s,30s,5m`; units
   * ms, s, m, h. After the last one a failing delivery becomes a dead letter. The default spans about a day.
   */
  @IsString()
  @Matches(/^\s*\d+(ms|s|m|h)\s*(,\s*\d+(ms|s|m|h)\s*)*$/, { message: 'RELAY_WEBHOOK_RETRY_SCHEDULE must be a comma-separated list like 5s,30s,5m,2h' })
  RELAY_WEBHOOK_RETRY_SCHEDULE: string = '5s,30s,2m,10m,30m,1h,2h,4h,8h,8h';

  /**
   * Turns the SSRF guard off for every outbound request: webhook, push and upstream agent URLs
   * (cards and A2A servers) may then reach loopback, private, link-local and metadata addresses.
   * For tests; an upstream agent on an internal network is allowed by RELAY_UPSTREAM_ALLOWED_NETWORKS.
   */
  @Transform(toBoolean)
  @IsIn([true, false], { message: 'RELAY_WEBHOOK_ALLOW_PRIVATE must be true or false' })
  RELAY_WEBHOOK_ALLOW_PRIVATE: boolean = false;

  /**
   * Private networks and hosts upstream agents (their cards, A2A servers and OAuth2 token
   * endpoints) may be on, which the SSRF guard refuses otherwise: comma-separated IP addresses,
   * CIDR networks, host names and `*.domain` wildcards, e.g. `10.0.0.0/8,planner.internal`.
   * Webhooks and push notifications stay guarded.
   */
  @ValidateBy({
    name: 'isAllowedNetworkList',
    validator: {
      validate: (value) => allowedNetworksProblem(value, UPSTREAM_ALLOWED_NETWORKS) === null,
      defaultMessage: (args) => allowedNetworksProblem(args?.value, UPSTREAM_ALLOWED_NETWORKS) ?? '',
    },
  })
  RELAY_UPSTREAM_ALLOWED_NETWORKS: string = '';

  /**
   * The deadline of one webhook, Slack, push or upstream agent request, unless the owner agent set
   * its own `webhook_timeout_ms`: from connecting until the whole answer is read (headers and body).
   */
  @IsInt()
  @Min(100)
  @Max(60000)
  RELAY_WEBHOOK_TIMEOUT_MS: number = 10000;

  /** The most bytes of a webhook, Slack or push receiver's answer the notifier reads; past it the connection is closed (the status counts). */
  @IsInt()
  @Min(1024)
  @Max(16 * 1024 * 1024)
  RELAY_WEBHOOK_MAX_RESPONSE_BYTES: number = 64 * 1024;

  /** Minimum interval between two posts to one Slack incoming webhook (Slack allows about one per second). */
  @IsInt()
  @Min(0)
  @Max(60000)
  RELAY_SLACK_MIN_INTERVAL_MS: number = 1000;

  /** Deliveries attempted at once by one notifier process. */
  @IsInt()
  @Min(1)
  @Max(256)
  RELAY_NOTIFIER_MAX_IN_FLIGHT: number = 16;

  /**
   * Deliveries one notifier process attempts at once to one destination (host and port), at most
   * RELAY_NOTIFIER_MAX_IN_FLIGHT: a slow receiver holds no more than this share of the slots.
   * Unset: a quarter of RELAY_NOTIFIER_MAX_IN_FLIGHT, at least 1 (see `slotShares`).
   */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(256)
  RELAY_NOTIFIER_SLOTS_PER_DESTINATION?: number;

  /** Deliveries one notifier process attempts at once for one owner (the agent whose webhook or push config it is); unset: as per destination. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(256)
  RELAY_NOTIFIER_SLOTS_PER_OWNER?: number;

  /** Consecutive timeouts or connection failures at one destination that open its circuit breaker. */
  @IsInt()
  @Min(1)
  @Max(1000)
  RELAY_NOTIFIER_BREAKER_FAILURES: number = 5;

  /** How long an open breaker first holds its destination's deliveries; it doubles after each failed probe. */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  RELAY_NOTIFIER_BREAKER_OPEN_MS: number = 30_000;

  /** The longest an open breaker holds its destination's deliveries between two probes. */
  @IsInt()
  @Min(100)
  @Max(86_400_000)
  RELAY_NOTIFIER_BREAKER_MAX_OPEN_MS: number = 600_000;

  /** Events the durable consumer holds un-acknowledged at most. */
  @IsInt()
  @Min(1)
  @Max(10000)
  RELAY_NOTIFIER_MAX_ACK_PENDING: number = 64;

  /**
   * How long a task event waits for this process's feed of push-config events to have read the
   * stream up to it (a config set just before the event then applies to it). An event still ahead
   * of the feed after this is handed back for redelivery, counted and logged. Below the 30 s ack wait.
   */
  @IsInt()
  @Min(100)
  @Max(20000)
  RELAY_NOTIFIER_FEED_WAIT_MS: number = 5000;

  /** Succeeded deliveries (and dead letters) older than this many days are removed from the log. */
  @IsInt()
  @Min(1)
  @Max(3650)
  RELAY_DELIVERY_RETENTION_DAYS: number = 30;

  /** The first wait between two polls of an upstream agent's task (`GetTask`), and again after each change it showed. */
  @IsInt()
  @Min(50)
  @Max(60_000)
  RELAY_UPSTREAM_POLL_MIN_MS: number = 250;

  /** The longest wait between two polls of an upstream task that shows no change (the wait doubles up to it). */
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  RELAY_UPSTREAM_POLL_MAX_MS: number = 30_000;

  /**
   * The most bytes of one upstream agent's answer (of a stream: of one event) the notifier reads;
   * past it the connection is closed, and a task whose answer is that large fails, saying so.
   */
  @IsInt()
  @Min(64 * 1024)
  @Max(256 * 1024 * 1024)
  RELAY_UPSTREAM_MAX_ANSWER_BYTES: number = 8 * 1024 * 1024;

  /** Polls of one upstream task in a row that time out (no whole answer within the deadline) before its relay task fails, saying so. */
  @IsInt()
  @Min(1)
  @Max(1000)
  RELAY_UPSTREAM_MAX_TIMED_OUT_POLLS: number = 5;

  /** A stream of an upstream task that brings no event for this long is closed and subscribed to again (`SubscribeToTask`). */
  @IsInt()
  @Min(1000)
  @Max(3_600_000)
  RELAY_UPSTREAM_STREAM_IDLE_MS: number = 300_000;

  /**
   * Where upstream agents whose card declares push notifications send them (the edge's
   * `<RELAY_PUBLIC_URL>/upstream-push`, as they reach it); unset, such agents are polled.
   */
  @IsString()
  @Matches(/^(https?:\/\/\S+[^/])?$/, { message: 'RELAY_UPSTREAM_PUSH_URL must be an http(s) URL without a trailing slash' })
  RELAY_UPSTREAM_PUSH_URL: string = '';

  /** A task followed by push is still polled this often, in case a notification is lost. */
  @IsInt()
  @Min(1000)
  @Max(86_400_000)
  RELAY_UPSTREAM_PUSH_POLL_MS: number = 60_000;

  /** How often each upstream agent's card is read again (by one replica at a time); 0: only when an operator asks. */
  @IsInt()
  @Min(0)
  @Max(604_800_000)
  RELAY_UPSTREAM_CARD_REFRESH_MS: number = 21_600_000;

  /** Link to a task in your own UI for Slack messages (`{task_id}` is replaced); unset, Slack shows the task id. */
  @IsString()
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'RELAY_THREAD_URL_TEMPLATE must be an http(s) URL' })
  RELAY_THREAD_URL_TEMPLATE: string = '';

  /**
   * The approvers' webhook: each handoff a hold rule keeps for approval is posted there
   * (`a2a.task.held`, signed with RELAY_APPROVALS_WEBHOOK_SECRET) with a link to its console page
   * under RELAY_PUBLIC_URL. Unset: no webhook.
   */
  @IsString()
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'RELAY_APPROVALS_WEBHOOK_URL must be an http(s) URL' })
  RELAY_APPROVALS_WEBHOOK_URL: string = '';

  /** The Standard Webhooks secret (`whsec_` + base64) that signs the approvers' webhook; required with RELAY_APPROVALS_WEBHOOK_URL. */
  @ValidateIf((config: NotifierConfig) => config.RELAY_APPROVALS_WEBHOOK_URL !== '')
  @Matches(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, {
    message:
      'RELAY_APPROVALS_WEBHOOK_SECRET must be a Standard Webhooks secret (whsec_ and base64 of at least 24 bytes) when RELAY_APPROVALS_WEBHOOK_URL is set',
  })
  RELAY_APPROVALS_WEBHOOK_SECRET: string = '';

  /** The approvers' Slack incoming webhook: each held handoff is announced there with its console link. Unset: no Slack message. */
  @IsString()
  @Matches(/^(https?:\/\/\S+)?$/, { message: 'RELAY_APPROVALS_SLACK_WEBHOOK_URL must be an http(s) URL' })
  RELAY_APPROVALS_SLACK_WEBHOOK_URL: string = '';

  /**
   * Keeps the relay's approvals Slack channel to no org's handoffs: a held handoff or tool prompt
   * whose org has no approvals channel of its own is announced nowhere on Slack (the approvers'
   * webhook and the console still have it). False: such an org's go to RELAY_APPROVALS_SLACK_WEBHOOK_URL.
   */
  @Transform(toBoolean)
  @IsIn([true, false], { message: 'RELAY_APPROVALS_SLACK_ORG_ONLY must be true or false' })
  RELAY_APPROVALS_SLACK_ORG_ONLY: boolean = false;
}

/** Where the relay's approvers are told of held handoffs (docs/operations.md#approvals); empty: not told there. */
export interface ApproverChannels {
  webhookUrl: string;
  slackWebhookUrl: string;
  /** RELAY_APPROVALS_SLACK_ORG_ONLY: the relay's Slack channel hears of no org's handoffs. */
  slackOrgOnly: boolean;
  /** The console, e.g. `https://relay.example.com/console`: each notice links to `<console>/approvals/<task id>`. */
  consoleUrl: string;
}

/** The approvers' channels as configured, with the console under RELAY_PUBLIC_URL. */
export function approverChannelsOf(config: NotifierConfig): ApproverChannels {
  return {
    webhookUrl: config.RELAY_APPROVALS_WEBHOOK_URL,
    slackWebhookUrl: config.RELAY_APPROVALS_SLACK_WEBHOOK_URL,
    slackOrgOnly: config.RELAY_APPROVALS_SLACK_ORG_ONLY,
    consoleUrl: `${config.RELAY_PUBLIC_URL.replace(/\/+$/, '')}/console`,
  };
}

/** What upstream agents may reach beyond public addresses: everything when the guard is off, else the allowlist. */
export function upstreamPrivateTargets(config: NotifierConfig): PrivateTargets {
  if (config.RELAY_WEBHOOK_ALLOW_PRIVATE) return true;
  let allowed = parsedAllowlists.get(config);
  if (!allowed) {
    allowed = AllowedNetworks.parse(config.RELAY_UPSTREAM_ALLOWED_NETWORKS, UPSTREAM_ALLOWED_NETWORKS);
    parsedAllowlists.set(config, allowed);
  }
  return allowed;
}

const parsedAllowlists = new WeakMap<NotifierConfig, AllowedNetworks>();

/**
 * Says at start what the SSRF guard lets through when that is more than public addresses: a
 * warning while it is off (for everything, or for upstream agents through a /0 network), the
 * upstream allowlist otherwise.
 */
export function logOutboundGuard(config: NotifierConfig, logger: { log(message: string): void; warn(message: string): void }): void {
  if (config.RELAY_WEBHOOK_ALLOW_PRIVATE) {
    logger.warn(
      'RELAY_WEBHOOK_ALLOW_PRIVATE is true: the SSRF guard is off, webhooks, push notifications and upstream agents may reach loopback, private and cloud metadata addresses (meant for tests)',
    );
    return;
  }
  const upstream = upstreamPrivateTargets(config) as AllowedNetworks;
  if (upstream.isEmpty) return;
  const message = `upstream agents may be on these private networks and hosts (${UPSTREAM_ALLOWED_NETWORKS}): ${upstream.entries.join(', ')}`;
  if (upstream.coversEverything) logger.warn(`${message}; a /0 network turns the SSRF guard off for upstream agents`);
  else logger.log(message);
}

/** The in-flight slots one destination and one owner may hold at once: as configured, else a quarter of all; never more than all. */
export function slotShares(config: NotifierConfig): { perDestination: number; perOwner: number; perUpstream: number } {
  const all = config.RELAY_NOTIFIER_MAX_IN_FLIGHT;
  const quarter = Math.max(1, Math.ceil(all / 4));
  const perDestination = Math.min(all, config.RELAY_NOTIFIER_SLOTS_PER_DESTINATION ?? quarter);
  return {
    perDestination,
    perOwner: Math.min(all, config.RELAY_NOTIFIER_SLOTS_PER_OWNER ?? quarter),
    // An upstream agent's server answers a delivery at once (it does not wait for the task): while
    // its breaker is closed it may take all slots but a destination's share, which stays for the rest.
    perUpstream: Math.max(perDestination, all - perDestination),
  };
}
