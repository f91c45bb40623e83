import { Inject, Injectable, Logger } from '@nestjs/common';
import { Role, type Message, type SendMessageResult } from '@a2a-js/sdk';
import type { ParticipantRef, PartView, UpstreamInterface } from '@app/contracts';
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
    const message = this.messageOf(body);
    let result: SendMessageResult;
    try {
      const client = await upstreamClient(upstream, fetchImpl, {
        ...credentialHeaders(credential),
        [SENDER_HEADER]: body.sender,
        [RELAY_TASK_HEADER]: body.task_id,
      });
      result = await client.sendMessage(
        {
          tenant: '',
          message,
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
          metadata: undefined,
        },
        { signal },
      );
    } catch (error) {
      const refused = error instanceof SsrfRefusedError || (error as Error)?.cause instanceof SsrfRefusedError;
      const status = statusOf(error);
      return outcome({
        ok: false,
        retryable: !refused && (status === null || status === 429 || status >= 500 || status === 401 || status === 403),
        statusCode: status,
        error: `${refused ? 'refused: ' : ''}${(error as Error)?.message ?? String(error)}`.slice(0, 2000),
      });
    }
    await this.follower.follow({
      taskId: body.task_id,
      recipient,
      sender: body.sender,
      upstreamTaskId: isTask(result) ? result.id : null,
      upstreamContextId: isTask(result) ? result.contextId : (result.contextId ?? null),
      answer: isTask(result) ? null : result,
      reported: NOTHING_REPORTED,
    });
    this.logger.log(
      { task_id: body.task_id, upstream_task_id: isTask(result) ? result.id : null, handle: recipient.handle },
      'delivered to the upstream agent',
    );
    return outcome({ ok: true, retryable: false, statusCode: 200, error: null });
  }

  private messageOf(body: UpstreamDeliveryBody): Message {
    const parts: PartView[] = body.message.parts?.length ? body.message.parts : [{ kind: 'text', text: body.message.body }];
    return {
      messageId: body.message.id,
      contextId: '',
      taskId: '',
      role: Role.ROLE_USER,
      parts: parts.map(toSdkPart),
      metadata: { ...(body.message.payload ?? {}), [RELAY_METADATA_KEY]: { sender: body.sender, task_id: body.task_id, context_id: body.context_id } },
      extensions: [],
      referenceTaskIds: [],
    };
  }
}
