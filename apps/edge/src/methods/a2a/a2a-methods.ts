import { Inject, Injectable } from '@nestjs/common';
import {
  parseCancelParams,
  parseCompleteParams,
  parseGetParams,
  parseListParams,
  parsePushConfigListParams,
  parsePushConfigRefParams,
  parsePushConfigSetParams,
  parseSendParams,
  parseUpdateStatusParams,
  renderSendResult,
  renderTask,
  renderPushConfig,
  renderPushConfigList,
  beginsState,
  renderTaskPage,
  taskAfterEvents,
  toWireState,
  type A2aArtifactInput,
  type A2aMessageInput,
  type ReportedState,
  type SendParams,
  type TaskRendering,
} from '@app/a2a';
import {
  assertMessageFitsReplies,
  assertPartsAccepted,
  inputModesOf,
  isTerminalState,
  PUSH_CONFIG_SUBJECTS,
  RelayError,
  TASK_LIMITS,
  TASKS_SUBJECTS,
  type AgentIdentity,
  type AdmitReply,
  type AgentProfile,
  type ArtifactInput,
  type MessageView,
  type MessageInput,
  type PushConfigTaskRequest,
  type TaskCommand,
  type TaskEvent,
  type TaskState,
  type TaskView,
  type TransitionRequest,
  type WireVersion,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { traceIdOfHeader } from '@app/tracing';
import { AgentCardService } from '../../cards/cards.service';
import { DirectoryLookups } from '../../directory/directory-lookups';
import { EdgeConfig } from '../../edge.config';
import { ChainRefusals } from '../chain-refusals';
import type { DialectMethods, MethodCall } from '../dialect-methods';
import { lastEventIdHeader, TaskStreams, type EventStream } from '../../streams/task-streams';
import { participant, TaskAccess, type ReadOptions } from '../../task-access/task-access';
import type { A2aCommand } from './a2a-command';
import { agentCardV03 } from '../../cards/extended-card';
import { decodePageToken, encodePageToken } from './page-token';
import { TaskEventWaiter, type EventsAhead } from './task-event-waiter';
import { requestedTenant, tenantRefusal } from './tenant';

/** A blocking send returns once its task is terminal, waits for input, or is held for approval (interrupted states). */
function settled(state: TaskState): boolean {
  return isTerminalState(state) || state === 'input_required' || state === 'held';
}

function messageInput(message: A2aMessageInput): MessageInput {
  return {
    ...(message.messageId !== undefined ? { message_id: message.messageId } : {}),
    parts: message.parts,
    ...(message.metadata !== undefined ? { payload: message.metadata } : {}),
  };
}

function artifactInputs(artifacts: A2aArtifactInput[]): ArtifactInput[] {
  return artifacts.map((artifact) => ({ ...artifact }));
}

/** How many messages to ask the tasks service for: at least the latest one, for `status.message`. */
function historyToFetch(historyLength: number | undefined): number | undefined {
  return historyLength === undefined ? undefined : Math.max(1, historyLength);
}

/**
 * The rules of a send that depend on what is stored (the task's context, the ids of its messages),
 * which the edge cannot check before asking: their errors name the field as the A2A client wrote it.
 */
const SEND_STATE_RULE_FIELDS = { context_id: 'message.contextId', 'message.message_id': 'message.messageId' };

/** Errors of a standard cancel that A2A calls TaskNotCancelable (-32002). */
const NOT_CANCELABLE = new Set(['invalid_transition', 'not_authorized_transition', 'state_changed', 'thread_terminal', 'task_not_cancelable']);

/**
 * The standard A2A methods (v0.3 and v1.0) over the tasks service: the edge orchestrates
 * directory admission and tasks commands, and renders the neutral task view in the caller's
 * wire version.
 */
@Injectable()
export class A2aMethods implements DialectMethods {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(TaskEventWaiter) private readonly waiter: TaskEventWaiter,
    @Inject(AgentCardService) private readonly cards: AgentCardService,
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
    @Inject(TaskAccess) private readonly access: TaskAccess,
    @Inject(TaskStreams) private readonly streams: TaskStreams,
    @Inject(ChainRefusals) private readonly chainRefusals: ChainRefusals,
  ) {}

  /** The JSON-RPC binding: a call of either A2A wire version, as one command. */
  handle(call: MethodCall): Promise<unknown> {
    const version: WireVersion = call.dialect.kind === 'a2a' ? call.dialect.version : '0.3';
    const resumeFrom = lastEventIdHeader(call.headers);
    const callerTraceId = traceIdOfHeader(call.headers.traceparent);
    return this.execute({
      method: call.method,
      canonical: call.canonical,
      params: call.params,
      version,
      caller: call.caller,
      endpointHandle: call.endpointHandle,
      ...(resumeFrom !== undefined ? { lastEventId: resumeFrom } : {}),
      ...(callerTraceId !== null ? { callerTraceId } : {}),
    });
  }

  /**
   * Runs one A2A operation for any binding. Returns the rendered result of the command's wire
   * version (an EventStream of rendered StreamResponses for the streaming ones).
   */
  async execute(call: A2aCommand): Promise<unknown> {
    await this.checkTenant(call);
    return this.operation(call);
  }

  /**
   * A request naming a tenant reaches only an agent of the org with that tenant
   * (docs/orgs.md#an-orgs-own-a2a-address); one naming none is answered as before.
   */
  private async checkTenant(call: A2aCommand): Promise<void> {
    const tenant = requestedTenant(call.params);
    if (tenant === undefined) return;
    let agentTenant: string | null = null;
    if (call.endpointHandle !== null) {
      try {
        agentTenant = (await this.endpointAgent(call.endpointHandle)).tenant ?? null;
      } catch (error) {
        if (!(error instanceof RelayError) || error.reason !== 'agent_not_found') throw error;
      }
    }
    const refusal = tenantRefusal(call.endpointHandle, tenant, agentTenant);
    if (refusal) throw refusal;
  }

  private operation(call: A2aCommand): Promise<unknown> {
    const version = call.version;
    switch (call.canonical) {
      case 'send':
        return this.send(call, version);
      case 'get':
        return this.get(call, version);
      case 'list':
        return this.list(call, version);
      case 'cancel':
        return this.cancel(call, version);
      case 'complete':
        return this.complete(call, version);
      case 'update_status':
        return this.updateStatus(call, version);
      case 'extended_card':
        return this.extendedCard(call, version);
      case 'push_config_set':
        return this.setPushConfig(call, version);
      case 'push_config_get':
        return this.getPushConfig(call, version);
      case 'push_config_list':
        return this.listPushConfigs(call, version);
      case 'push_config_delete':
        return this.deletePushConfig(call);
      case 'stream':
        return this.stream(call, version);
      case 'resubscribe':
        return this.resubscribe(call, version);
      case 'update':
        throw new RelayError('method_not_found', `${call.method} is an AgentRelay method: call it without the A2A-Version: 1.0 header`, {
          method: call.method,
        });
      default:
        throw new RelayError('method_not_found', `Method '${call.method}' not found`, { method: call.method });
    }
  }

  // ---- SendMessage / message/send -------------------------------------------------------------

  private async send(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const startedAt = Date.now();
    const params = parseSendParams(call.params);
    const historyLength = historyToFetch(params.historyLength);
    // Heard from before the send goes out, so that its wait reads the task only once it settled.
    const ahead = params.blocking ? this.waiter.listenAhead(call.caller.handle) : undefined;
    let task: TaskView;
    try {
      task = await this.sendTask(call, params, version);
      if (ahead && task.sender.id === call.caller.id && !settled(task.state)) {
        const answer = await this.waitUntilSettled(call.caller, task, startedAt + this.config.RELAY_BLOCKING_TIMEOUT_MS, historyLength, version, ahead);
        if (answer.heard) return renderSendResult(answer.heard, version, { historyLength: params.historyLength });
        task = answer.read;
      }
    } finally {
      ahead?.stop();
    }
    const complete = await this.completeHistory(call.caller, task, params.historyLength);
    return renderSendResult(complete.task, version, { historyLength: params.historyLength, historyCut: complete.cut });
  }

  /** What every send does, blocking or not, streaming or not: create, continue or sibling a task, and register its push config. */
  private async sendTask(call: A2aCommand, params: SendParams, version: WireVersion): Promise<TaskView> {
    const { message } = params;
    assertMessageFitsReplies(messageInput(message), this.rpc.maxPayloadBytes);
    const historyLength = historyToFetch(params.historyLength);
    let task: TaskView;
    let replay: boolean;
    if (message.taskId !== undefined) {
      const endpoint = call.endpointHandle !== null ? await this.endpointAgent(call.endpointHandle) : null;
      // On an agent's endpoint the message goes to that agent (the tasks service refuses a task not between the two).
      if (endpoint) assertPartsAccepted(message.parts, inputModesOf(endpoint), endpoint.handle);
      const reply = await this.tasks(
        () =>
          this.rpc.request(TASKS_SUBJECTS.send, {
            caller: participant(call.caller),
            task_id: message.taskId,
            ...(endpoint ? { counterpart_id: endpoint.id } : {}),
            ...(message.contextId !== undefined ? { context_id: message.contextId } : {}),
            message: messageInput(message),
            ...(historyLength !== undefined ? { history_length: historyLength } : {}),
          }),
        SEND_STATE_RULE_FIELDS,
      );
      task = reply.task;
      replay = reply.idempotent_replay;
    } else {
      const recipientHandle = call.endpointHandle ?? params.recipient;
      if (recipientHandle === undefined) {
        throw new RelayError(
          'invalid_params',
          'A new task needs a recipient: send it to /a2a/{handle}, or give message.metadata.recipient or the recipient param',
          {
            field: 'recipient',
          },
        );
      }
      const {
        recipient,
        hold,
        tool_prompts: toolPrompts,
        chain,
        org_chain: orgChain,
        sender_org_open_handoffs: senderOrgOpenHandoffs,
      } = await this.admit(call.caller, recipientHandle, call.endpointHandle !== null);
      assertPartsAccepted(message.parts, inputModesOf(recipient), recipient.handle);
      const reply = await this.tasks(
        () =>
          this.chainRefusals.audited(call.caller, recipient.handle, 'message.referenceTaskIds', () =>
            this.rpc.request(TASKS_SUBJECTS.send, {
              caller: participant(call.caller),
              recipient: participant(recipient),
              ...(hold.length > 0 ? { hold_rules: hold } : {}),
              ...(toolPrompts.length > 0 ? { tool_prompt_rules: toolPrompts } : {}),
              ...(chain && Object.keys(chain).length > 0 ? { chain_policy: chain } : {}),
              ...(orgChain && Object.keys(orgChain).length > 0 ? { org_chain_policy: orgChain } : {}),
              ...(typeof senderOrgOpenHandoffs === 'number' ? { sender_org_open_handoffs: senderOrgOpenHandoffs } : {}),
              ...(message.contextId !== undefined ? { context_id: message.contextId } : {}),
              message: messageInput(message),
              ...(params.metadata !== undefined ? { metadata: params.metadata } : {}),
              ...(historyLength !== undefined ? { history_length: historyLength } : {}),
              ...(message.referenceTaskIds !== undefined ? { parent_task_ids: message.referenceTaskIds } : {}),
              ...(call.callerTraceId !== undefined ? { caller_trace_id: call.callerTraceId } : {}),
            }),
          ),
        SEND_STATE_RULE_FIELDS,
      );
      task = reply.task;
      replay = reply.idempotent_replay;
    }
    // A retried send (same messageId) registered its config the first time.
    const pushConfig = params.pushConfig;
    if (pushConfig !== undefined && !replay) {
      await this.tasks(() => this.rpc.request(PUSH_CONFIG_SUBJECTS.set, { caller: participant(call.caller), task_id: task.id, version, config: pushConfig }));
    }
    return task;
  }

  /**
   * The send's task once settled: as the events heard since the send make it (`heard`, with its
   * whole history) or, when they cannot say it all, as read back (`read`).
   */
  private async waitUntilSettled(
    caller: AgentIdentity,
    task: TaskView,
    deadline: number,
    historyLength: number | undefined,
    version: WireVersion,
    ahead: EventsAhead,
  ): Promise<{ heard: TaskRendering; read?: undefined } | { heard?: undefined; read: TaskView }> {
    let latest = task;
    // A commit's events all carry the state it leaves: the one that begins it is the commit's last to wake on.
    const wakes = (event: TaskEvent): boolean => settled(event.state) && beginsState(event);
    const result = await this.waiter.waitFor(
      task.id,
      deadline,
      async () => {
        const events = ahead.eventsOf(task.id);
        const heard = events ? taskAfterEvents(task, events, settled) : null;
        if (heard) return { heard };
        latest = await this.read(caller, task.id, historyLength, false);
        return settled(latest.state) ? { read: latest } : undefined;
      },
      // Every event since the send was heard: the task is made (or read) once the one that settles it came.
      { wakes, checkFirst: ahead.heard(task.id, wakes) },
    );
    if (result) return result;
    throw new RelayError(
      'blocking_timeout',
      `Task ${task.id} is still ${toWireState(latest.state, version)} after the server deadline of ${this.config.RELAY_BLOCKING_TIMEOUT_MS} ms; poll it with GetTask instead of sending again`,
      { taskId: task.id, contextId: task.context_id, state: toWireState(latest.state, version) },
    );
  }

  // ---- SendStreamingMessage / message/stream, SubscribeToTask / tasks/resubscribe ---------------

  /** A non-blocking send answered as a stream of the task's events until it settles (docs/events.md#stream-events). */
  private async stream(call: A2aCommand, version: WireVersion): Promise<EventStream> {
    const params = parseSendParams(call.params);
    const task = await this.sendTask(call, params, version);
    return this.streams.open({ caller: call.caller, endpointHandle: null, taskId: task.id, version, kind: 'send', historyLength: params.historyLength });
  }

  /** The stream of a task the caller takes part in: its current state (or the events after `Last-Event-ID`), then its events until it is over. */
  private async resubscribe(call: A2aCommand, version: WireVersion): Promise<EventStream> {
    const params = parseGetParams(call.params);
    return this.streams.open({
      caller: call.caller,
      endpointHandle: call.endpointHandle,
      taskId: params.id,
      version,
      kind: 'subscribe',
      lastEventId: call.lastEventId,
      historyLength: params.historyLength,
    });
  }

  // ---- GetTask / tasks/get --------------------------------------------------------------------

  private async get(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parseGetParams(call.params);
    const task = await this.read(call.caller, params.id, historyToFetch(params.historyLength), true, { counterpartId: await this.counterpartOf(call) });
    const complete = await this.completeHistory(call.caller, task, params.historyLength);
    return renderTask(complete.task, version, { historyLength: params.historyLength, historyCut: complete.cut });
  }

  // ---- ListTasks ------------------------------------------------------------------------------

  private async list(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parseListParams(call.params);
    const endpoint = call.endpointHandle !== null ? await this.endpointAgent(call.endpointHandle) : null;
    const token = params.pageToken !== undefined ? decodePageToken(params.pageToken) : undefined;
    const page = await this.tasks(
      () =>
        this.rpc.request(TASKS_SUBJECTS.list, {
          caller_id: call.caller.id,
          role: 'either',
          ...(endpoint ? { counterpart_id: endpoint.id } : {}),
          ...(params.contextId !== undefined ? { context_id: params.contextId } : {}),
          ...(params.status !== undefined ? { states: [params.status] } : {}),
          ...(params.statusTimestampAfter !== undefined ? { status_timestamp_after: params.statusTimestampAfter } : {}),
          limit: params.pageSize,
          ...(token ? { cursor: token.cursor } : {}),
          order: 'status',
          history_length: 1,
          include_total: token === undefined,
          include_artifacts: params.includeArtifacts,
        }),
      { cursor: 'pageToken' },
    );
    // Histories longer than the latest message are read task by task, so that no single NATS
    // message has to carry a whole page of histories; the page's byte budget applies afterwards.
    const wantsHistory = params.historyLength === undefined || params.historyLength > 1;
    const { tasks, cut } = wantsHistory
      ? await this.withHistories(call.caller, page.items, params.historyLength)
      : { tasks: page.items, cut: new Set<string>() };
    const total = token?.total ?? page.total_size ?? page.items.length;
    return renderTaskPage(
      {
        tasks,
        cutHistories: cut,
        nextPageToken: page.next_cursor ? encodePageToken({ cursor: page.next_cursor, total }) : '',
        pageSize: params.pageSize,
        totalSize: total,
      },
      version,
      { historyLength: params.historyLength, includeArtifacts: params.includeArtifacts, historyBudgetBytes: this.config.RELAY_LIST_HISTORY_BUDGET_BYTES },
    );
  }

  private async withHistories(caller: AgentIdentity, items: TaskView[], historyLength: number | undefined): Promise<{ tasks: TaskView[]; cut: Set<string> }> {
    const tasks: TaskView[] = new Array<TaskView>(items.length);
    const cut = new Set<string>();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length) {
        const index = next++;
        const item = items[index];
        if (item.message_count <= item.messages.length) {
          tasks[index] = item;
          continue;
        }
        const read = await this.read(caller, item.id, historyLength, false).then((task) => this.completeHistory(caller, task, historyLength));
        tasks[index] = read.task;
        if (read.cut) cut.add(item.id);
      }
    };
    await Promise.all(Array.from({ length: Math.min(8, items.length) }, () => worker()));
    return { tasks, cut };
  }

  /**
   * A tasks reply carries only as many of the newest messages as fit one NATS message. When more
   * were asked for, the older ones are read page by page (oldest first) up to the history byte
   * budget; past it, only the newest part is kept and the task is flagged as cut.
   */
  private async completeHistory(caller: AgentIdentity, first: TaskView, historyLength: number | undefined): Promise<{ task: TaskView; cut: boolean }> {
    const wanted = historyLength === undefined ? first.message_count : Math.min(historyLength, first.message_count);
    if (first.messages.length >= wanted || first.messages.length === 0) return { task: first, cut: false };
    const size = (messages: MessageView[]): number => messages.reduce((sum, message) => sum + Buffer.byteLength(JSON.stringify(message)), 0);
    const earliestKept = first.messages[0].sequence_no;
    const older: MessageView[] = [];
    let bytes = size(first.messages);
    let after = first.message_count - wanted;
    while (after < earliestKept - 1) {
      const page = await this.read(caller, first.id, undefined, false, { afterSequenceNo: after });
      const fresh = page.messages.filter((message) => message.sequence_no > after && message.sequence_no < earliestKept);
      if (fresh.length === 0) break;
      older.push(...fresh);
      after = fresh[fresh.length - 1].sequence_no;
      bytes += size(fresh);
      if (bytes > this.config.RELAY_LIST_HISTORY_BUDGET_BYTES) return { task: first, cut: true };
    }
    const messages = [...older, ...first.messages];
    return { task: { ...first, messages }, cut: messages.length < wanted };
  }

  // ---- CancelTask / tasks/cancel --------------------------------------------------------------

  private async cancel(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parseCancelParams(call.params);
    const counterpartId = await this.counterpartOf(call);
    try {
      const reply = await this.transition({
        caller_id: call.caller.id,
        task_id: params.id,
        ...(counterpartId !== undefined ? { counterpart_id: counterpartId } : {}),
        transition: 'cancel',
        cancel_mode: 'any_active',
      });
      return renderTask(reply.task, version);
    } catch (error) {
      if (error instanceof RelayError && NOT_CANCELABLE.has(error.reason)) {
        throw new RelayError(
          'task_not_cancelable',
          `Task ${params.id} cannot be canceled: only its creator can cancel it, and only while it is submitted, working or input-required`,
          {
            taskId: params.id,
          },
        );
      }
      throw error;
    }
  }

  // ---- GetExtendedAgentCard / agent/getAuthenticatedExtendedCard -----------------------------

  /** The authenticated caller's view of the endpoint's card: the agent's on /a2a/{handle}, the relay's on /a2a. */
  private async extendedCard(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const card = call.endpointHandle !== null ? await this.cards.agentCardV1(call.endpointHandle) : await this.cards.relayCardV1();
    return version === '1.0' ? card : agentCardV03(card);
  }

  // ---- Push-notification configs (kept by the tasks service, delivered by the notifier) -------

  private async setPushConfig(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parsePushConfigSetParams(call.params);
    const owner = await this.pushConfigOwner(call, params.taskId);
    const config = await this.tasks(() => this.rpc.request(PUSH_CONFIG_SUBJECTS.set, { ...owner, version, config: params.config }));
    return renderPushConfig(config, version);
  }

  private async getPushConfig(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parsePushConfigRefParams(call.params, false);
    const owner = await this.pushConfigOwner(call, params.taskId);
    const config = await this.tasks(() =>
      this.rpc.request(PUSH_CONFIG_SUBJECTS.get, { ...owner, ...(params.configId !== undefined ? { config_id: params.configId } : {}) }),
    );
    return renderPushConfig(config, version);
  }

  private async listPushConfigs(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parsePushConfigListParams(call.params);
    const owner = await this.pushConfigOwner(call, params.taskId);
    const reply = await this.tasks(() => this.rpc.request(PUSH_CONFIG_SUBJECTS.list, owner));
    return renderPushConfigList(reply.configs, version);
  }

  /** Idempotent: deleting a config that is not there answers null too. */
  private async deletePushConfig(call: A2aCommand): Promise<unknown> {
    const params = parsePushConfigRefParams(call.params, true);
    const owner = await this.pushConfigOwner(call, params.taskId);
    await this.tasks(() => this.rpc.request(PUSH_CONFIG_SUBJECTS.delete, { ...owner, config_id: params.configId as string }));
    return null;
  }

  /** Whose config of which task: on /a2a/{handle}, of a task between the caller and that agent (the tasks service checks it). */
  private async pushConfigOwner(call: A2aCommand, taskId: string): Promise<PushConfigTaskRequest> {
    const counterpartId = await this.counterpartOf(call);
    return { caller: participant(call.caller), task_id: taskId, ...(counterpartId !== undefined ? { counterpart_id: counterpartId } : {}) };
  }

  // ---- Agent-side: CompleteTask and UpdateStatus (docs/dialects.md#agent-side-methods) -------

  private async complete(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parseCompleteParams(call.params);
    const task = await this.readForUpdate(call, params.id);
    const steps: TaskCommand[] = task.state === 'pending' ? ['accept', 'complete'] : ['complete'];
    return renderTask(await this.runSteps(call, task, steps, params.message, params.artifacts), version);
  }

  private async updateStatus(call: A2aCommand, version: WireVersion): Promise<unknown> {
    const params = parseUpdateStatusParams(call.params);
    const task = await this.readForUpdate(call, params.id);
    const steps = this.plan(task.state, params.state);
    if (params.state === 'input_required' && params.message === undefined && steps.includes('request_input')) {
      throw new RelayError('invalid_params', 'status.message is required to ask for input (the question)', { field: 'status.message' });
    }
    if (steps.length === 1 && steps[0] === 'progress' && params.message === undefined && params.artifacts.length === 0) return renderTask(task, version);
    return renderTask(await this.runSteps(call, task, steps, params.message, params.artifacts), version);
  }

  /** The transitions that take a task from `from` to the state an agent reported. */
  private plan(from: TaskState, to: ReportedState | undefined): TaskCommand[] {
    const viaAccept = (command: TaskCommand): TaskCommand[] => (from === 'pending' ? ['accept', command] : [command]);
    switch (to) {
      case undefined:
        return ['progress'];
      case 'accepted':
        return from === 'pending' ? ['accept'] : ['progress'];
      case 'input_required':
        return from === 'input_required' ? ['progress'] : viaAccept('request_input');
      case 'completed':
        return viaAccept('complete');
      case 'failed':
        return viaAccept('fail');
      case 'rejected':
        return ['decline'];
    }
  }

  private async runSteps(
    call: A2aCommand,
    task: TaskView,
    steps: TaskCommand[],
    message: A2aMessageInput | undefined,
    artifacts: A2aArtifactInput[],
  ): Promise<TaskView> {
    let current = task;
    for (const [index, step] of steps.entries()) {
      const last = index === steps.length - 1;
      const reason = message?.body || undefined;
      // The whole text stays in the message; the reason the task records is its first characters.
      const shortReason = reason?.slice(0, TASK_LIMITS.reasonChars);
      const request: TransitionRequest = {
        caller_id: call.caller.id,
        task_id: task.id,
        transition: step,
        ...(last && message !== undefined ? { message: messageInput(message) } : {}),
        ...(last && artifacts.length > 0 ? { artifacts: artifactInputs(artifacts) } : {}),
        ...(last && step === 'complete' && reason !== undefined ? { result_summary: reason } : {}),
        ...(last && (step === 'fail' || step === 'decline') && shortReason !== undefined ? { reason: shortReason } : {}),
      };
      current = (await this.transition(request)).task;
    }
    return current;
  }

  private async readForUpdate(call: A2aCommand, taskId: string): Promise<TaskView> {
    return this.read(call.caller, taskId, 1, false, { counterpartId: await this.counterpartOf(call) });
  }

  // ---- Shared plumbing ------------------------------------------------------------------------

  private transition(request: TransitionRequest) {
    return this.tasks(() => this.rpc.request(TASKS_SUBJECTS.transition, request));
  }

  private read(
    caller: AgentIdentity,
    taskId: string,
    historyLength: number | undefined,
    markRead: boolean,
    page: Pick<ReadOptions, 'afterSequenceNo' | 'counterpartId'> = {},
  ): Promise<TaskView> {
    return this.tasks(() => this.access.read(caller, taskId, { historyLength, markRead, ...page }));
  }

  /**
   * Runs a tasks command whose input the edge has checked (libs/a2a, to the limits of the tasks
   * contract). A task id the tasks service cannot even parse is "task not found" (a standard client
   * only ever learns that a task is not one of its own); the errors of the rules on stored state
   * listed in `stateRuleFields` name the field as the A2A client wrote it.
   */
  private async tasks<T>(command: () => Promise<T>, stateRuleFields: Record<string, string> = {}): Promise<T> {
    try {
      return await command();
    } catch (error) {
      if (!(error instanceof RelayError) || error.reason !== 'invalid_params' || typeof error.data?.field !== 'string') throw error;
      const field = error.data.field;
      if (field === 'task_id') throw new RelayError('thread_not_found', 'Task not found');
      const a2aField = stateRuleFields[field];
      if (a2aField === undefined || !error.message.startsWith(`${field} `)) throw error;
      throw new RelayError('invalid_params', `${a2aField}${error.message.slice(field.length)}`, { ...error.data, field: a2aField });
    }
  }

  /** The agent of `POST /a2a/{handle}`; an unknown or disabled handle is `agent_not_found` (404). */
  private endpointAgent(handle: string): Promise<AgentProfile> {
    return this.directory.profile(handle);
  }

  /**
   * On an agent's own endpoint only the tasks between the caller and that agent exist: the id of
   * that agent, for the tasks service to decide it in its own queries (undefined on `/a2a`).
   */
  private async counterpartOf(call: A2aCommand): Promise<string | undefined> {
    return call.endpointHandle !== null ? (await this.endpointAgent(call.endpointHandle)).id : undefined;
  }

  private async admit(caller: AgentIdentity, recipient: string, fromEndpoint: boolean): Promise<AdmitReply> {
    try {
      return await this.directory.admit(caller.handle, recipient);
    } catch (error) {
      if (fromEndpoint && error instanceof RelayError && error.reason === 'recipient_not_found') {
        throw new RelayError('agent_not_found', `No agent with the handle ${recipient}`, { handle: recipient });
      }
      throw error;
    }
  }
}
