import { Inject, Injectable, Logger } from '@nestjs/common';
import { Role, type Message, type SendMessageResult } from '@a2a-js/sdk';
import { A2AError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import type { ParticipantRef, PartView, TaskEventMessage, UpstreamInterface } from '@app/contracts';
import type { DeliveryRow } from '../deliveries/deliveries.service';
import type { UpstreamDeliveryBody } from '../deliveries/delivery-planner';
import { SsrfRefusedError } from '../deliveries/ssrf-guard';
import type { SendOutcome } from '../deliveries/webhook-sender';
import { NotifierConfig } from '../notifier.config';
import { DirectoryClient } from '../targets/directory-client.service';
import { guardedFetch } from './guarded-fetch';
import { RELAY_TASK_HEADER, SENDER_HEADER, upstreamClient } from './upstream-client';
import { credentialHeaders, UpstreamCredentialsService } from './upstream-credentials.service';
import { NOTHING_REPORTED, toSdkPart } from './upstream-mapping';
import { UpstreamFollowerService } from './upstream-follower.service';

/** The metadata key under which an upstream agent finds who sent the handoff, and which relay task it is. */
export const RELAY_METADATA_KEY = 'agentrelay';

function isTask(result: SendMessageResult): result is Exclude<SendMessageResult, Message> {
  return typeof result === 'object' && result !== null && 'status' in result;
}

/**
 * An A2A error the upstream server answered (no such task, not cancelable, unsupported, malformed):
 * the server is up and refuses this request, so repeating it changes nothing.
 */
function isProtocolRefusal(error: unknown): boolean {
  return error instanceof A2AError && error.reason !== 'INTERNAL_ERROR';
}

/** The HTTP status an SDK error names, when it names one. */
function statusOf(error: unknown): number | null {
  const match = /\b(?:status:?|HTTP)\s*(\d{3})\b/i.exec((error as Error)?.message ?? '');
  return match ? Number(match[1]) : null;
}

/**
 * Delivers a new task to an upstream agent's A2A server: one `SendMessage` (returning at once)
 * through the official SDK client, with the relay's message id as its `messageId` (a server that
 * keeps message ids answers a retry with the same task), the sender's handle in the message
 * metadata and in `X-AgentRelay-Sender`, the agent's sealed credential in its header. The answer
 * (a task, or a message) is recorded beside the relay task in the same process step that ends the
 * attempt, and the follower takes it from there.
 */
@Injectable()
export class UpstreamDeliveryService {
  private readonly logger = new Logger(UpstreamDeliveryService.name);

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(DirectoryClient) private readonly directory: DirectoryClient,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
    @Inject(UpstreamFollowerService) private readonly follower: UpstreamFollowerService,
  ) {}

  async deliver(delivery: DeliveryRow, signal: AbortSignal): Promise<SendOutcome> {
    const startedAt = Date.now();
    const outcome = (partial: Omit<SendOutcome, 'durationMs' | 'retryAfterMs'>): SendOutcome => ({
      ...partial,
      retryAfterMs: null,
      durationMs: Date.now() - startedAt,
    });
    const body = delivery.body as UpstreamDeliveryBody;
    let recipient: ParticipantRef;
    let upstream: UpstreamInterface;
    try {
      const agent = await this.directory.agent(body.recipient);
      if (!agent || agent.disabled || !agent.upstream) {
        return outcome({ ok: false, retryable: false, statusCode: null, error: `${body.recipient} is no longer an upstream agent: not delivered` });
      }
      recipient = { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role };
      upstream = agent.upstream;
    } catch (error) {
      return outcome({ ok: false, retryable: true, statusCode: null, error: `the directory did not answer: ${(error as Error).message}` });
    }
    const credential = await this.credentials.get(recipient.handle);
    const timeoutMs = delivery.timeout_ms ?? this.config.RELAY_WEBHOOK_TIMEOUT_MS;
    const fetchImpl = guardedFetch({ allowPrivate: this.config.RELAY_WEBHOOK_ALLOW_PRIVATE, userAgent: 'AgentRelay-Notifier/1', timeoutMs });
    const action = body.action ?? 'create';
    // A reply or a cancel goes to the upstream task the first message became: it waits (by the retry schedule) until there is one.
    const followed = action === 'create' ? null : await this.follower.find(body.task_id);
    if (action !== 'create' && !followed) {
      return outcome({
        ok: false,
        retryable: true,
        statusCode: null,
        error: 'the handoff is not at the upstream agent yet: this follows once its first message is',
      });
    }
    if (action !== 'create' && !followed?.upstreamTaskId) {
      // The upstream answered the first message with a message: there is no upstream task to continue or cancel.
      return action === 'cancel'
        ? outcome({ ok: true, retryable: false, statusCode: 200, error: null })
        : outcome({
            ok: false,
            retryable: false,
            statusCode: null,
            error: 'the upstream agent answered the handoff with a message, not a task: there is no task to continue',
          });
    }
    const upstreamTaskId = followed?.upstreamTaskId ?? '';
    let result: SendMessageResult | null = null;
    try {
      const client = await upstreamClient(upstream, fetchImpl, {
        ...credentialHeaders(credential),
        [SENDER_HEADER]: body.sender,
        [RELAY_TASK_HEADER]: body.task_id,
      });
      if (action === 'cancel') {
        await client.cancelTask(
          { tenant: '', id: upstreamTaskId, metadata: { [RELAY_METADATA_KEY]: { sender: body.sender, task_id: body.task_id } } },
          { signal },
        );
      } else {
        result = await client.sendMessage(
          {
            tenant: '',
            message: this.messageOf(body, followed ? { taskId: upstreamTaskId, contextId: followed.upstreamContextId ?? '' } : null),
            configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
            metadata: undefined,
          },
          { signal },
        );
      }
    } catch (error) {
      // Canceling a task the upstream already ended (or canceled): nothing left to stop.
      if (action === 'cancel' && error instanceof TaskNotCancelableError) {
        await this.follower.close(body.task_id);
        return outcome({ ok: true, retryable: false, statusCode: 200, error: null });
      }
      const refused = error instanceof SsrfRefusedError || (error as Error)?.cause instanceof SsrfRefusedError;
      const status = statusOf(error);
      // On an upstream task: the server's A2A error (no such task, it ended, …) says this will never go.
      const refusedByAgent = action !== 'create' && isProtocolRefusal(error) && (status === null || (status < 500 && ![401, 403, 429].includes(status)));
      return outcome({
        ok: false,
        retryable: !refused && !refusedByAgent && (status === null || status === 429 || status >= 500 || status === 401 || status === 403),
        statusCode: status,
        error: `${refused ? 'refused: ' : ''}${(error as Error)?.message ?? String(error)}`.slice(0, 2000),
      });
    }
    if (action === 'cancel') {
      await this.follower.close(body.task_id);
      this.logger.log({ task_id: body.task_id, upstream_task_id: upstreamTaskId, handle: recipient.handle }, 'cancel delivered to the upstream agent');
    } else if (action === 'reply') {
      await this.follower.nudge(body.task_id);
      this.logger.log({ task_id: body.task_id, upstream_task_id: upstreamTaskId, handle: recipient.handle }, 'reply delivered to the upstream agent');
    } else {
      const answer = result as SendMessageResult;
      await this.follower.follow({
        taskId: body.task_id,
        recipient,
        sender: body.sender,
        upstreamTaskId: isTask(answer) ? answer.id : null,
        upstreamContextId: isTask(answer) ? answer.contextId : (answer.contextId ?? null),
        answer: isTask(answer) ? null : answer,
        reported: NOTHING_REPORTED,
      });
      this.logger.log(
        { task_id: body.task_id, upstream_task_id: isTask(answer) ? answer.id : null, handle: recipient.handle },
        'delivered to the upstream agent',
      );
    }
    return outcome({ ok: true, retryable: false, statusCode: 200, error: null });
  }

  /** The relay's message as the upstream gets it: the relay's message id, on the upstream task when it continues one. */
  private messageOf(body: UpstreamDeliveryBody, on: { taskId: string; contextId: string } | null): Message {
    const sent = body.message as TaskEventMessage;
    const parts: PartView[] = sent.parts?.length ? sent.parts : [{ kind: 'text', text: sent.body }];
    return {
      messageId: sent.id,
      contextId: on?.contextId ?? '',
      taskId: on?.taskId ?? '',
      role: Role.ROLE_USER,
      parts: parts.map(toSdkPart),
      metadata: { ...(sent.payload ?? {}), [RELAY_METADATA_KEY]: { sender: body.sender, task_id: body.task_id, context_id: body.context_id } },
      extensions: [],
      referenceTaskIds: [],
    };
  }
}
