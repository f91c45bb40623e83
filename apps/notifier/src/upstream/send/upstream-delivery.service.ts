import { Inject, Injectable, Logger } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import {
  Role,
  TaskState,
  type Message,
  type SendMessageRequest,
  type SendMessageResult,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
} from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError, TaskNotCancelableError } from '@a2a-js/sdk/errors';
import { applyStreamEvent, isSettled, NOTHING_REPORTED, taskOfMessage, toSdkPart } from '@app/a2a';
import type { ParticipantRef, PartView, TaskEventMessage, UpstreamInterface } from '@app/contracts';
import { pickTraceHeaders } from '@app/tracing';
import { SsrfRefusedError } from '../../outbound/ssrf-guard';
import type { SendOutcome } from '../../outbound/send-outcome';
import { NotifierConfig } from '../../notifier.config';
import { AgentTargetsService } from '../../targets/agent-targets.service';
import { callHeaders, UpstreamClientsService } from '../client/upstream-clients.service';
import type { UpstreamDeliveryBody } from './upstream-delivery-body';
import { AnswerTooLargeError, causeOf } from '../../outbound/guarded-fetch';
import { OAuth2TokenError } from '../identity/oauth2-token';
import { UpstreamCredentialsService } from '../identity/upstream-credentials.service';
import { UpstreamFollowerService, type AdoptedStream, type FollowWithAttempt, type PolledTask } from '../follow/upstream-follower.service';

/** What of a recorded delivery an attempt at the upstream reads (the delivery worker's row). */
export interface UpstreamDeliveryAttempt {
  /** An `UpstreamDeliveryBody`. */
  body: unknown;
  headers: Record<string, string>;
  /** The owner agent's request timeout; null: the notifier's default. */
  timeout_ms: number | null;
  /** Attempts made before this one. */
  attempts: number;
}

/**
 * An attempt's outcome, and the follow of the upstream task it made, to record with it: once both
 * are recorded, what that gives (the upstream's answer reported, or its stream read) runs.
 */
export interface UpstreamSendOutcome extends SendOutcome {
  follow?: FollowWithAttempt;
}

/** The metadata key under which an upstream agent finds who sent the handoff, and which relay task it is. */
export const RELAY_METADATA_KEY = 'agentrelay';

/** What the first event of a stream tells of the upstream's answer: its task (or the task an update is about), or a direct message. */
function answerOf(event: StreamResponse, taskId: string): SendMessageResult {
  const payload = event.payload;
  if (payload?.$case === 'message') return payload.value;
  return applyStreamEvent(null, event, taskId) as Task;
}

function isTask(result: SendMessageResult): result is Exclude<SendMessageResult, Message> {
  return typeof result === 'object' && result !== null && 'status' in result;
}

/** `GetTask` of the upstream task the delivery just made, never rejecting: what it answered, or why not. */
function pollOf(client: Client, upstreamTaskId: string, taskId: string): Promise<PolledTask> {
  return client.getTask({ tenant: '', id: upstreamTaskId, historyLength: undefined }, { serviceParameters: callHeaders(taskId) }).then(
    (task) => ({ task }),
    (error: unknown) => ({ error }),
  );
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
 * metadata and in `X-AgentRelay-Sender`, the attempt's signed assertion of who asked in
 * `X-AgentRelay-Assertion` and its place in the handoff's trace (`traceparent`), the agent's sealed
 * credential in its header, through the client the notifier keeps for the agent. The answer (a task,
 * or a message) is recorded beside the relay task in the statement that records the attempt;
 * once both are recorded, an answer already final or waiting for input is reported to the
 * tasks service as it is (else the upstream task is polled at once), and the follower takes it from there.
 */
@Injectable()
export class UpstreamDeliveryService {
  private readonly logger = new Logger(UpstreamDeliveryService.name);

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(AgentTargetsService) private readonly targets: AgentTargetsService,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
    @Inject(UpstreamFollowerService) private readonly follower: UpstreamFollowerService,
    @Inject(UpstreamClientsService) private readonly clients: UpstreamClientsService,
  ) {}

  /** `identity`: the attempt's identity headers (its signed assertion), sent beside the credential. */
  async deliver(delivery: UpstreamDeliveryAttempt, signal: AbortSignal, identity: Record<string, string> = {}): Promise<UpstreamSendOutcome> {
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
      // As the directory's agent events keep it in memory (asked of the directory only when not heard of yet).
      const agent = await this.targets.agent(body.recipient);
      if (!agent || agent.target.disabled || !agent.target.upstream) {
        return outcome({ ok: false, retryable: false, statusCode: null, error: `${body.recipient} is no longer an upstream agent: not delivered` });
      }
      recipient = { id: agent.id, handle: agent.target.handle, name: agent.target.name, role: null };
      upstream = agent.target.upstream;
    } catch (error) {
      return outcome({ ok: false, retryable: true, statusCode: null, error: `the directory did not answer: ${(error as Error).message}` });
    }
    const timeoutMs = delivery.timeout_ms ?? this.config.RELAY_WEBHOOK_TIMEOUT_MS;
    const action = body.action ?? 'create';
    // A reply or a cancel goes to the upstream task the first message became: it waits (by the retry schedule) until there is one.
    // A first attempt of a new handoff has nothing recorded yet (a follow is only written by an attempt, which counts first).
    const followed = action === 'create' && delivery.attempts === 0 ? null : await this.follower.find(body.task_id);
    if (action === 'create' && followed) {
      // An earlier attempt's answer was recorded (the process stopped before the attempt was): nothing to send again.
      return outcome({ ok: true, retryable: false, statusCode: 200, error: null });
    }
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
    const push = action === 'create' ? this.pushReceiver(upstream, body.task_id) : null;
    let result: SendMessageResult | null = null;
    let stream: AdoptedStream | undefined;
    let polled: Promise<PolledTask> | undefined;
    try {
      const client = await this.clients.clientFor(recipient.handle, upstream, timeoutMs);
      // The attempt's place in the handoff's trace (docs/chains.md) and who asked, signed, beside the task and sender.
      const serviceParameters = { ...callHeaders(body.task_id, body.sender), ...pickTraceHeaders(delivery.headers), ...identity };
      if (action === 'cancel') {
        await client.cancelTask(
          { tenant: '', id: upstreamTaskId, metadata: { [RELAY_METADATA_KEY]: { sender: body.sender, task_id: body.task_id } } },
          { signal, serviceParameters },
        );
      } else {
        const request = {
          tenant: '',
          message: this.messageOf(body, followed ? { taskId: upstreamTaskId, contextId: followed.upstreamContextId ?? '' } : null),
          configuration: { acceptedOutputModes: [], taskPushNotificationConfig: push?.config, returnImmediately: true },
          metadata: undefined,
        };
        // An earlier attempt may have reached the server and lost only its answer (a timeout, or
        // this process died): look for the task it made before making another.
        const earlier = action === 'create' && delivery.attempts > 0 ? await this.findEarlierTask(client, body, upstream, serviceParameters) : null;
        if (earlier) result = earlier;
        else if (action === 'create' && upstream.streaming) {
          stream = await this.openStream(client, request, signal, timeoutMs, serviceParameters);
          result = answerOf(stream.first, body.task_id);
        } else result = await client.sendMessage(request, { signal, serviceParameters });
        // A new upstream task not settled yet is asked for again at once, while its answer and the attempt are recorded.
        if (action === 'create' && !upstream.streaming && isTask(result) && !isSettled(result)) polled = pollOf(client, result.id, body.task_id);
      }
    } catch (error) {
      // Canceling a task the upstream already ended (or canceled): nothing left to stop.
      if (action === 'cancel' && error instanceof TaskNotCancelableError) {
        await this.follower.close(body.task_id);
        return outcome({ ok: true, retryable: false, statusCode: 200, error: null });
      }
      const refused = error instanceof SsrfRefusedError || (error as Error)?.cause instanceof SsrfRefusedError;
      const status = error instanceof OAuth2TokenError ? null : statusOf(error);
      // A token the upstream refuses is not asked for again: the next attempt gets a new one.
      if (status === 401) this.credentials.forget(recipient.handle);
      // On an upstream task: the server's A2A error (no such task, it ended, …) says this will never go.
      const refusedByAgent = action !== 'create' && isProtocolRefusal(error) && (status === null || (status < 500 && ![401, 403, 429].includes(status)));
      // An answer larger than the relay reads is as large the next time.
      const tooLarge = causeOf(error, AnswerTooLargeError) !== null;
      return outcome({
        ok: false,
        retryable: !refused && !refusedByAgent && !tooLarge && (status === null || status === 429 || status >= 500 || status === 401 || status === 403),
        statusCode: status,
        error: `${refused ? 'refused: ' : ''}${error instanceof OAuth2TokenError ? 'OAuth2 token: ' : ''}${(error as Error)?.message ?? String(error)}`.slice(
          0,
          2000,
        ),
      });
    }
    let follow: FollowWithAttempt | undefined;
    if (action === 'cancel') {
      await this.follower.close(body.task_id);
      this.logger.log({ task_id: body.task_id, upstream_task_id: upstreamTaskId, handle: recipient.handle }, 'cancel delivered to the upstream agent');
    } else if (action === 'reply') {
      await this.follower.nudge(body.task_id);
      this.logger.log({ task_id: body.task_id, upstream_task_id: upstreamTaskId, handle: recipient.handle }, 'reply delivered to the upstream agent');
    } else {
      const answer = result as SendMessageResult;
      const task = isTask(answer) ? answer : taskOfMessage(answer, body.task_id);
      follow = this.follower.followWithAttempt(
        {
          taskId: body.task_id,
          recipient,
          sender: body.sender,
          upstreamTaskId: isTask(answer) ? answer.id : null,
          upstreamContextId: isTask(answer) ? answer.contextId : (answer.contextId ?? null),
          answer: isTask(answer) ? null : answer,
          reported: NOTHING_REPORTED,
          pushTokenHash: push?.tokenHash ?? null,
        },
        stream,
        // Looked at once the attempt is recorded: reported as it is when settled, else as the poll made meanwhile shows it.
        stream === undefined ? { answer: task, polled } : undefined,
      );
      this.logger.log(
        { task_id: body.task_id, upstream_task_id: isTask(answer) ? answer.id : null, handle: recipient.handle },
        'delivered to the upstream agent',
      );
    }
    return { ...outcome({ ok: true, retryable: false, statusCode: 200, error: null }), ...(follow ? { follow } : {}) };
  }

  /**
   * The upstream task an earlier attempt of this handoff made, if the server can say: `ListTasks`
   * (A2A 1.0) in the context the relay gave it, a task whose history holds the relay's message id.
   * Null when there is none, or the server cannot list (v0.3, unsupported, an error): then it is
   * sent again, and a server that ignores message ids may make a second task.
   */
  private async findEarlierTask(
    client: Client,
    body: UpstreamDeliveryBody,
    upstream: UpstreamInterface,
    serviceParameters: Record<string, string>,
  ): Promise<Task | null> {
    if (upstream.protocol_version !== '1.0') return null;
    const messageId = (body.message as TaskEventMessage).id;
    try {
      const listed = await client.listTasks(
        {
          tenant: '',
          contextId: body.context_id,
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageSize: 100,
          pageToken: '',
          historyLength: 100,
          statusTimestampAfter: undefined,
          includeArtifacts: false,
        },
        { serviceParameters },
      );
      const found = listed.tasks.find((task) => task.history.some((message) => message.messageId === messageId)) ?? null;
      if (found) this.logger.log({ task_id: body.task_id, upstream_task_id: found.id }, 'an earlier attempt made the upstream task: not sent again');
      return found;
    } catch (error) {
      this.logger.debug({ err: error, task_id: body.task_id }, 'the upstream could not list its tasks: sent again');
      return null;
    }
  }

  /**
   * The relay's own receiver for the upstream's push notifications about this task, when the card
   * declares them, the upstream does not stream (a stream says it all), and the relay knows where
   * it receives them: the task's URL under RELAY_UPSTREAM_PUSH_URL and a new random token, sent
   * as `Authorization: Bearer` (the relay keeps only its hash).
   */
  private pushReceiver(upstream: UpstreamInterface, taskId: string): { config: TaskPushNotificationConfig; tokenHash: string } | null {
    const base = this.config.RELAY_UPSTREAM_PUSH_URL;
    if (!upstream.push_notifications || upstream.streaming || !base) return null;
    const token = randomBytes(32).toString('base64url');
    return {
      config: {
        tenant: '',
        id: 'agentrelay',
        taskId: '',
        url: `${base}/${encodeURIComponent(taskId)}`,
        token: '',
        authentication: { scheme: 'Bearer', credentials: token },
      },
      tokenHash: createHash('sha256').update(token).digest('hex'),
    };
  }

  /**
   * `SendStreamingMessage`, up to its first event (the task it made, or a direct answer) within the
   * delivery's timeout; the rest of the stream is the follower's to read. Closed when this process stops.
   */
  private async openStream(
    client: Client,
    request: SendMessageRequest,
    signal: AbortSignal,
    timeoutMs: number,
    serviceParameters: Record<string, string>,
  ): Promise<AdoptedStream> {
    const controller = new AbortController();
    const stop = () => controller.abort();
    signal.addEventListener('abort', stop, { once: true });
    const timer = setTimeout(() => controller.abort(new Error(`no first stream event within ${timeoutMs} ms`)), timeoutMs);
    const rest = client.sendMessageStream(request, { signal: controller.signal, serviceParameters });
    try {
      const first = await rest.next();
      if (first.done || !first.value.payload) throw new Error('the upstream agent closed the stream before its first event');
      return { first: first.value, rest, controller };
    } catch (error) {
      controller.abort();
      throw controller.signal.reason instanceof Error && !signal.aborted ? controller.signal.reason : error;
    } finally {
      // From here on the follower closes it (when the stream ends, the task ends or the process stops).
      clearTimeout(timer);
      signal.removeEventListener('abort', stop);
    }
  }

  /** The relay's message as the upstream gets it: the relay's message id, on the upstream task when it continues one. */
  private messageOf(body: UpstreamDeliveryBody, on: { taskId: string; contextId: string } | null): Message {
    const sent = body.message as TaskEventMessage;
    const parts: PartView[] = sent.parts?.length ? sent.parts : [{ kind: 'text', text: sent.body }];
    return {
      messageId: sent.id,
      // A new upstream task is made in the relay task's context: the context groups the handoffs of
      // one conversation upstream as on the relay, and lets a retry find what an earlier attempt made.
      contextId: on ? on.contextId : body.context_id,
      taskId: on?.taskId ?? '',
      role: Role.ROLE_USER,
      parts: parts.map(toSdkPart),
      metadata: { ...(sent.payload ?? {}), [RELAY_METADATA_KEY]: { sender: body.sender, task_id: body.task_id, context_id: body.context_id } },
      extensions: [],
      referenceTaskIds: [],
    };
  }
}
