import { renderPushBody } from '@app/a2a';
import { approvalsSlackRouteOf, PERMISSION_REQUEST_KIND, type DeliveryChannel, type TaskEvent, type TaskEventType } from '@app/contracts';
import type { ApproverChannels } from '../notifier.config';
import type { AgentTarget, PushTarget } from '../targets/delivery-targets';
import type { UpstreamAction, UpstreamDeliveryBody } from '../upstream/send/upstream-delivery-body';
import { assertionFactsOf, type DeliveryAssertionFacts } from './delivery-assertion';

/** One delivery to record (and then attempt) for an event. */
export interface PlannedDelivery {
  channel: DeliveryChannel;
  /** Webhook event name, e.g. `a2a.task.completed`. */
  event: string;
  target_handle: string;
  /** With the event id and the channel, identifies the delivery: a handle or a push config id. */
  target_ref: string;
  url: string;
  content_type: string;
  /** Extra request headers (the A2A push authentication). */
  headers: Record<string, string>;
  body: unknown;
  /** The request timeout of its attempts: the owner agent's `webhook_timeout_ms`, or null for the notifier's default. */
  timeout_ms?: number | null;
  /** What each attempt's signed assertion states (webhook, push and upstream deliveries); Slack gets none. */
  assertion?: DeliveryAssertionFacts | null;
  /** The URL is a secret kept sealed (an org's approvals channel): the delivery row stores it sealed too. */
  sealed_url?: boolean;
}

type Party = 'sender' | 'recipient';

/**
 * The task events that notify agents: an artifact's own event (`artifact_updated`) is for live
 * streams only, its task's next event tells; a `held` task tells the approvers (below), not an agent.
 */
export type NotifyingEventType = Exclude<TaskEventType, 'artifact_updated' | 'held'>;

export function notifies(event: TaskEvent): event is TaskEvent & { type: NotifyingEventType } {
  return event.type !== 'artifact_updated' && event.type !== 'held';
}

/** The delivery log's target of the approvers' channels (no agent handle has no `@`). */
export const APPROVERS_TARGET = 'approvers';

/** The webhook event name of a held handoff, to the approvers. */
export const HELD_WEBHOOK_EVENT = 'a2a.task.held';

/** The webhook event name of a coding agent's tool prompt that people answer, to the approvers. */
export const TOOL_PROMPT_WEBHOOK_EVENT = 'a2a.task.tool_prompt';

/** The console page of one held handoff. */
export function approvalUrlOf(consoleUrl: string, taskId: string): string {
  return `${consoleUrl.replace(/\/+$/, '')}/approvals/${encodeURIComponent(taskId)}`;
}

/** The approvers' Slack message: who holds what from whom, by which rule, until when, and the console link. */
export function heldSlackMessage(event: TaskEvent, approvalUrl: string): { text: string; blocks: unknown[] } {
  const rule = event.hold?.rule ?? 'a hold rule';
  const expires = event.hold?.expires_at ?? 'its deadline';
  return {
    text: `Approval needed: ${event.sender} → ${event.recipient} (${event.task.intent}) held by the rule "${rule}" until ${expires}: ${approvalUrl}`,
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `:raised_hand: *Approval needed:* a handoff from *${escapeSlack(event.sender)}* to *${escapeSlack(event.recipient)}* is held by the rule "${escapeSlack(rule)}"${event.hold?.four_eyes ? ' (four eyes)' : ''}\n${quote(event.task.summary)}`,
        },
      },
      {
        type: 'context',
        elements: [
          { type: 'mrkdwn', text: `Intent: ${escapeSlack(event.task.intent)} · Expires: ${escapeSlack(expires)} · <${approvalUrl}|Review it in the console>` },
        ],
      },
    ],
  };
}

/** The tool a question asks about, when the event is a recipient's question that people answer (`permission_request` with `answered_by: "approvers"`), else null. */
export function approversToolPromptOf(event: TaskEvent): { tool_name: string; request_id: string } | null {
  if (event.type !== 'message_appended') return null;
  const message = event.task.latest_message;
  if (!message || message.from !== event.recipient || message.sequence_no !== event.sequence_no) return null;
  const request = message.payload?.[PERMISSION_REQUEST_KIND] as Record<string, unknown> | undefined;
  if (typeof request !== 'object' || request === null || request.answered_by !== 'approvers') return null;
  const { tool_name: toolName, request_id: requestId } = request;
  return typeof toolName === 'string' && typeof requestId === 'string' ? { tool_name: toolName, request_id: requestId } : null;
}

/** The approvers' Slack message of a tool prompt: whose agent wants which tool, on whose handoff (its console page), and where to answer. */
export function toolPromptSlackMessage(event: TaskEvent, toolName: string, consoleUrl: string): { text: string; blocks: unknown[] } {
  const consoleBase = consoleUrl.replace(/\/+$/, '');
  const approvalsUrl = `${consoleBase}/approvals`;
  const handoffUrl = `${consoleBase}/handoffs/${encodeURIComponent(event.task_id)}`;
  return {
    text: `Tool prompt: ${event.recipient}'s coding agent wants to use ${toolName} on a handoff from ${event.sender} (${handoffUrl}); answer it at ${approvalsUrl}`,
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `:raised_hand: *Tool prompt:* the coding agent of *${escapeSlack(event.recipient)}* wants to use \`${escapeSlack(toolName)}\` on a handoff from *${escapeSlack(event.sender)}*\n${quote(event.task.summary)}`,
        },
      },
      { type: 'context', elements: [{ type: 'mrkdwn', text: `<${handoffUrl}|The handoff> · <${approvalsUrl}|Answer it in the console>` }] },
    ],
  };
}

/** Whether a task event tells the approvers: a held handoff, or a tool prompt that people answer. */
export function tellsApprovers(event: TaskEvent): boolean {
  return event.type === 'held' || approversToolPromptOf(event) !== null;
}

/**
 * A held handoff, or a tool prompt that people answer (docs/decisions/0031-tool-prompts-answered-by-people.md),
 * to the approvers' channels: their webhook (Standard Webhooks JSON, the task event as data and
 * the console link beside it) and their Slack, each when configured. The Slack message goes to the
 * channel of the org whose rule held it (`orgSlack`, the recipient's org's; nowhere when its URL
 * cannot be opened), else to the relay's
 * unless it keeps to org channels (`approvalsSlackRouteOf`). The recipient writes the question;
 * whether people may answer it is the task's, checked when they do.
 */
export function planApproverDeliveries(event: TaskEvent, channels: ApproverChannels, orgSlack: { url: string | null } | null = null): PlannedDelivery[] {
  const prompt = event.type === 'held' ? null : approversToolPromptOf(event);
  if (event.type !== 'held' && !prompt) return [];
  const kind = prompt ? TOOL_PROMPT_WEBHOOK_EVENT : HELD_WEBHOOK_EVENT;
  const approvalUrl = prompt ? `${channels.consoleUrl.replace(/\/+$/, '')}/approvals` : approvalUrlOf(channels.consoleUrl, event.task_id);
  const planned: PlannedDelivery[] = [];
  const common = { event: kind, target_handle: APPROVERS_TARGET, target_ref: APPROVERS_TARGET, content_type: 'application/json', headers: {} };
  if (channels.webhookUrl) {
    planned.push({
      ...common,
      channel: 'webhook',
      assertion: assertionFactsOf(event),
      url: channels.webhookUrl,
      body: { type: kind, timestamp: event.occurred_at, data: event, approval_url: approvalUrl },
    });
  }
  const route = approvalsSlackRouteOf(event.recipient, {
    orgHasChannel: orgSlack !== null,
    relayHasChannel: channels.slackWebhookUrl !== '',
    orgOnly: channels.slackOrgOnly,
  });
  const slackUrl = route.to === 'org' ? orgSlack?.url : route.to === 'relay' ? channels.slackWebhookUrl : null;
  if (slackUrl) {
    const body = prompt ? toolPromptSlackMessage(event, prompt.tool_name, channels.consoleUrl) : heldSlackMessage(event, approvalUrl);
    planned.push({ ...common, channel: 'slack', url: slackUrl, body, ...(route.to === 'org' ? { sealed_url: true } : {}) });
  }
  return planned;
}

/** Webhook event name of each task event and who it is for (`author-other`: the party that did not write the message). */
export const WEBHOOK_EVENTS: Record<NotifyingEventType, { event: string; to: Party | 'other-than-author' }> = {
  created: { event: 'a2a.task.created', to: 'recipient' },
  message_appended: { event: 'a2a.task.message', to: 'other-than-author' },
  accepted: { event: 'a2a.task.accepted', to: 'sender' },
  input_required: { event: 'a2a.task.input_required', to: 'sender' },
  completed: { event: 'a2a.task.completed', to: 'sender' },
  failed: { event: 'a2a.task.failed', to: 'sender' },
  rejected: { event: 'a2a.task.rejected', to: 'sender' },
  canceled: { event: 'a2a.task.canceled', to: 'recipient' },
};

/** Slack is told about new tasks (the recipient) and completions (the sender). */
const SLACK_EVENTS: Partial<Record<TaskEventType, Party>> = { created: 'recipient', completed: 'sender' };

/** The party a task event notifies by webhook, or null when it cannot be told (a message without an author). */
export function webhookPartyOf(event: TaskEvent): Party | null {
  const party = webhookRuleOf(event);
  // A task held for approval and never delivered tells its sender only.
  return party === 'recipient' && event.audience === 'sender' ? null : party;
}

function webhookRuleOf(event: TaskEvent): Party | null {
  if (!notifies(event)) return null;
  // The sender answering an input request puts the task back to work: that is its own doing, and
  // the recipient hears of it through the message's own event.
  if (event.type === 'accepted' && event.task.latest_message?.from === event.sender) return null;
  const rule = WEBHOOK_EVENTS[event.type].to;
  if (rule !== 'other-than-author') return rule;
  const author = event.task.latest_message?.from;
  if (!author) return null;
  if (author === event.sender) return 'recipient';
  if (author === event.recipient) return 'sender';
  return null;
}

/** The Standard Webhooks body: `{type, timestamp, data}` with the versioned task event as data. */
export function webhookBody(event: TaskEvent & { type: NotifyingEventType }): { type: string; timestamp: string; data: TaskEvent } {
  return { type: WEBHOOK_EVENTS[event.type].event, timestamp: event.occurred_at, data: event };
}

function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function quote(text: string, max = 300): string {
  const short = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return short
    .split('\n')
    .map((line) => `>${escapeSlack(line)}`)
    .join('\n');
}

/**
 * A Slack incoming-webhook message: readable text for notifications, blocks with who, what and the
 * task (a link when a task URL is configured, its id otherwise).
 */
export function slackMessage(event: TaskEvent, taskUrl: string | null): { text: string; blocks: unknown[] } {
  const sender = escapeSlack(event.sender);
  const recipient = escapeSlack(event.recipient);
  const summary = event.task.summary;
  let text: string;
  let headline: string;
  let detail = quote(summary);
  if (event.type === 'completed') {
    text = `${event.recipient} completed the handoff from ${event.sender}: ${event.task.result_summary ?? summary}`;
    headline = `:white_check_mark: *${recipient}* completed your handoff`;
    if (event.task.result_summary) detail += `\n*Result:* ${escapeSlack(event.task.result_summary)}`;
  } else {
    text = `New handoff from ${event.sender} to ${event.recipient}: ${summary}`;
    headline = `:incoming_envelope: New handoff from *${sender}* to *${recipient}*`;
  }
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n${detail}` } },
      {
        type: 'context',
        elements: [{ type: 'mrkdwn', text: `Intent: ${escapeSlack(event.task.intent)} · State: ${event.state} · ${taskReference(event.task_id, taskUrl)}` }],
      },
    ],
  };
}

function taskReference(taskId: string, taskUrl: string | null): string {
  return taskUrl ? `<${taskUrl}|Open the thread>` : `Thread \`${escapeSlack(taskId)}\``;
}

/** The task's URL from the configured template, or null when none is configured. */
export function taskUrlFor(template: string, taskId: string): string | null {
  return template ? template.replace('{task_id}', encodeURIComponent(taskId)) : null;
}

/** The webhook event name each upstream delivery is listed under: the task event it delivers. */
export const UPSTREAM_DELIVERY_EVENTS: Record<UpstreamAction, string> = {
  create: 'a2a.task.created',
  reply: 'a2a.task.message',
  cancel: 'a2a.task.canceled',
};

/** The upstream action a task event calls for: a new task, a message the sender wrote, the sender's cancel. */
export function upstreamActionOf(event: TaskEvent): UpstreamAction | null {
  switch (event.type) {
    case 'created':
      return event.task.latest_message ? 'create' : null;
    case 'message_appended':
      return event.task.latest_message?.from === event.sender ? 'reply' : null;
    case 'canceled':
      return 'cancel';
    default:
      return null;
  }
}

/**
 * For an agent that runs its own A2A server: a new task's first message, each later message of the
 * sender, and the sender's cancel, each one delivery there (the upstream agent's own messages,
 * which the relay reports as its, go nowhere).
 */
export function planUpstreamDelivery(event: TaskEvent, targets: Map<string, AgentTarget>): PlannedDelivery | null {
  const action = upstreamActionOf(event);
  if (!action) return null;
  const target = targets.get(event.recipient);
  if (!target || target.disabled || !target.upstream) return null;
  const body: UpstreamDeliveryBody = {
    action,
    task_id: event.task_id,
    context_id: event.context_id,
    sender: event.sender,
    recipient: event.recipient,
    message: event.task.latest_message,
  };
  return {
    channel: 'upstream',
    event: UPSTREAM_DELIVERY_EVENTS[action],
    target_handle: target.handle,
    target_ref: target.handle,
    url: target.upstream.url,
    content_type: 'application/json',
    headers: {},
    body,
    timeout_ms: target.webhook_timeout_ms,
    assertion: assertionFactsOf(event),
  };
}

/**
 * The deliveries one task event calls for: the notified party's webhook (Standard Webhooks JSON),
 * its Slack for new tasks and completions, and to an upstream agent's A2A server a new task, the
 * sender's messages and cancel.
 * Disabled or unknown agents get nothing.
 */
export function planDeliveries(event: TaskEvent, targets: Map<string, AgentTarget>, taskUrlTemplate: string): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  if (!notifies(event)) return planned;
  const upstream = planUpstreamDelivery(event, targets);
  if (upstream) planned.push(upstream);
  const webhookParty = webhookPartyOf(event);
  if (webhookParty) {
    const target = targets.get(event[webhookParty]);
    if (target && !target.disabled && target.notification_webhook_url) {
      planned.push({
        channel: 'webhook',
        event: WEBHOOK_EVENTS[event.type].event,
        target_handle: target.handle,
        target_ref: target.handle,
        url: target.notification_webhook_url,
        content_type: 'application/json',
        headers: {},
        body: webhookBody(event),
        timeout_ms: target.webhook_timeout_ms,
        assertion: assertionFactsOf(event),
      });
    }
  }
  const slackParty = SLACK_EVENTS[event.type];
  if (slackParty && !(slackParty === 'recipient' && event.audience === 'sender')) {
    const target = targets.get(event[slackParty]);
    if (target && !target.disabled && target.slack_webhook_url) {
      planned.push({
        channel: 'slack',
        event: WEBHOOK_EVENTS[event.type].event,
        target_handle: target.handle,
        target_ref: target.handle,
        url: target.slack_webhook_url,
        content_type: 'application/json',
        headers: {},
        body: slackMessage(event, taskUrlFor(taskUrlTemplate, event.task_id)),
      });
    }
  }
  return planned;
}

/**
 * Every event that notifies goes to each push config of its task, with the config's
 * authentication; its requests wait as long as the config's owner agent chose for its receivers.
 */
export function planPushDeliveries(event: TaskEvent, configs: PushTarget[], targets: ReadonlyMap<string, AgentTarget> = new Map()): PlannedDelivery[] {
  if (!notifies(event)) return [];
  const eventName = WEBHOOK_EVENTS[event.type].event;
  return configs.map((config) => {
    const headers: Record<string, string> = {};
    if (config.auth_scheme) headers.authorization = config.auth_credentials ? `${config.auth_scheme} ${config.auth_credentials}` : config.auth_scheme;
    if (config.token) headers['x-a2a-notification-token'] = config.token;
    return {
      channel: 'push',
      event: eventName,
      target_handle: config.owner_handle,
      target_ref: `push:${config.config_id}`,
      url: config.url,
      content_type: config.version === '1.0' ? 'application/a2a+json' : 'application/json',
      headers,
      body: renderPushBody(event, config.version, eventName),
      timeout_ms: targets.get(config.owner_handle)?.webhook_timeout_ms ?? null,
      assertion: assertionFactsOf(event),
    };
  });
}
