import { Inject, Injectable } from '@nestjs/common';
import {
  optionalNonBlank,
  parseAfterSequenceNo,
  parseIdempotencyKey,
  parseIntent,
  parseMetadata,
  parseProposedAction,
  parseRelayArtifacts,
  parseRelayListParams,
  parseRelayMessage,
  parseRelaySearchParams,
  parseParentTaskId,
  parseTaskId,
  renderListItem,
  renderRelayHold,
  renderRelayTask,
  renderSearchItem,
  renderTransition,
  requiredNonBlank,
} from '@app/agentrelay';
import {
  ADMIN_TASKS_SUBJECTS,
  AGENT_LIMITS,
  assertMessageFitsReplies,
  assertPartsAccepted,
  inputModesOf,
  invalidParams,
  RelayError,
  TASK_LIMITS,
  TASKS_SUBJECTS,
  TRANSITIONS,
  type SendRequest,
  type Transition,
  type TransitionRequest,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { traceIdOfHeader } from '@app/tracing';
import { DirectoryLookups } from '../../directory/directory-lookups';
import { InboxStreams } from '../../streams/inbox-stream';
import { lastEventIdHeader } from '../../streams/task-streams';
import { participant, TaskAccess } from '../../task-access/task-access';
import { ChainRefusals } from '../chain-refusals';
import type { DialectMethods, MethodCall } from '../dialect-methods';

/**
 * The AgentRelay dialect on `POST /a2a`: message/send, tasks/get, tasks/list, tasks/update,
 * tasks/cancel and the live inbox tasks/watch, in its shapes and error codes (docs/dialects.md#agentrelay). The edge authenticates, asks the directory to admit a new task's
 * recipient, and runs the command on the tasks service.
 */
@Injectable()
export class AgentRelayMethods implements DialectMethods {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
    @Inject(TaskAccess) private readonly access: TaskAccess,
    @Inject(InboxStreams) private readonly inbox: InboxStreams,
    @Inject(ChainRefusals) private readonly chainRefusals: ChainRefusals,
  ) {}

  handle(call: MethodCall): Promise<unknown> {
    switch (call.canonical) {
      case 'send':
        return this.send(call);
      case 'get':
        return this.get(call);
      case 'list':
        return this.list(call);
      case 'update':
        return this.update(call);
      case 'cancel':
        return this.cancel(call);
      case 'watch':
        return this.inbox.open(call.caller, lastEventIdHeader(call.headers));
      case 'search':
        return this.search(call);
      default:
        throw new RelayError('method_not_found', `Method '${call.method}' not found`, { method: call.method });
    }
  }

  private async send(call: MethodCall): Promise<unknown> {
    const params = call.params;
    const taskId = params.task_id === null || params.task_id === undefined ? undefined : parseTaskId(params);
    const message = parseRelayMessage(params);
    assertMessageFitsReplies(message, this.rpc.maxPayloadBytes);
    const intent = parseIntent(params);
    const proposedAction = parseProposedAction(params);
    const artifacts = parseRelayArtifacts(params);
    const metadata = parseMetadata(params);
    const idempotencyKey = parseIdempotencyKey(metadata);
    const contextId = optionalNonBlank(params, 'context_id', 'context_id', TASK_LIMITS.contextIdChars);
    const parentTaskId = parseParentTaskId(params);
    const callerTraceId = traceIdOfHeader(call.headers.traceparent);
    const common: Omit<SendRequest, 'caller'> = {
      message,
      ...(intent !== undefined ? { intent } : {}),
      ...(proposedAction !== null ? { proposed_action: proposedAction } : {}),
      ...(artifacts !== undefined ? { artifacts } : {}),
      ...(idempotencyKey !== undefined ? { idempotency_key: idempotencyKey } : {}),
      ...(contextId !== undefined ? { context_id: contextId } : {}),
      history_length: 0,
    };
    if (taskId === undefined) {
      const recipientHandle = this.recipientHandle(call);
      const {
        recipient,
        hold,
        tool_prompts: toolPrompts,
        chain,
        org_chain: orgChain,
        sender_org_open_handoffs: senderOrgOpenHandoffs,
      } = await this.directory.admit(call.caller.handle, recipientHandle);
      assertPartsAccepted(message.parts, inputModesOf(recipient), recipient.handle);
      const reply = await this.chainRefusals.audited(call.caller, recipient.handle, 'parent_task_id', () =>
        this.rpc.request(TASKS_SUBJECTS.send, {
          ...common,
          caller: participant(call.caller),
          recipient: participant(recipient),
          ...(hold.length > 0 ? { hold_rules: hold } : {}),
          ...(toolPrompts.length > 0 ? { tool_prompt_rules: toolPrompts } : {}),
          ...(chain && Object.keys(chain).length > 0 ? { chain_policy: chain } : {}),
          ...(orgChain && Object.keys(orgChain).length > 0 ? { org_chain_policy: orgChain } : {}),
          ...(typeof senderOrgOpenHandoffs === 'number' ? { sender_org_open_handoffs: senderOrgOpenHandoffs } : {}),
          ...(metadata !== undefined ? { metadata } : {}),
          ...(parentTaskId !== undefined ? { parent_task_ids: [parentTaskId] } : {}),
          ...(callerTraceId !== null ? { caller_trace_id: callerTraceId } : {}),
        }),
      );
      // A create answers pending (or held, when a hold rule kept it for approval): an idempotent retry gets that same original result.
      const created = reply.task.hold ? 'held' : 'pending';
      return {
        task_id: reply.task.id,
        status: { state: reply.idempotent_replay ? created : reply.task.state },
        created_at: reply.task.created_at,
        // A root's chain is itself: the answer names a chain only for a handoff made for another.
        ...(reply.task.chain.parent_task_id !== null ? { chain: reply.task.chain } : {}),
        ...renderRelayHold(reply.task),
      };
    }
    if (params.recipient !== undefined && params.recipient !== null) requiredNonBlank(params, 'recipient', 'recipient', AGENT_LIMITS.handleChars);
    // On an agent's endpoint the message goes to that agent (the tasks service refuses a task not between the two).
    const endpoint = await this.access.endpointAgent(call.endpointHandle);
    if (endpoint) assertPartsAccepted(message.parts, inputModesOf(endpoint), endpoint.handle);
    const reply = await this.rpc.request(TASKS_SUBJECTS.send, {
      ...common,
      caller: participant(call.caller),
      task_id: taskId,
      ...(endpoint ? { counterpart_id: endpoint.id } : {}),
    });
    return {
      task_id: reply.task.id,
      thread_id: reply.task.id,
      message_id: reply.message.id,
      sequence_no: reply.message.sequence_no,
      created_at: reply.message.created_at,
    };
  }

  /**
   * One page of the task: its messages from the first (or after `after_sequence_no`) while they
   * fit one reply's budget; `next_after_sequence_no` says where the next page starts.
   */
  private async get(call: MethodCall): Promise<unknown> {
    const taskId = parseTaskId(call.params);
    const afterSequenceNo = parseAfterSequenceNo(call.params);
    return renderRelayTask(await this.access.read(call.caller, taskId, { afterSequenceNo, ...(await this.counterpart(call)) }));
  }

  private async list(call: MethodCall): Promise<unknown> {
    const params = parseRelayListParams(call.params);
    const endpoint = await this.access.endpointAgent(call.endpointHandle);
    const page = await this.rpc.request(TASKS_SUBJECTS.list, {
      caller_id: call.caller.id,
      ...params,
      ...(endpoint ? { counterpart_id: endpoint.id } : {}),
      order: 'created',
      history_length: 0,
      include_artifacts: false,
      summary_max_chars: TASK_LIMITS.summaryPreviewChars + 1,
    });
    return { items: page.items.map(renderListItem), next_cursor: page.next_cursor };
  }

  /** tasks/search: full-text search over the caller's own tasks (as sender or recipient), ranked, with highlights. */
  private async search(call: MethodCall): Promise<unknown> {
    const params = parseRelaySearchParams(call.params);
    const endpoint = await this.access.endpointAgent(call.endpointHandle);
    const found = await this.rpc.request(ADMIN_TASKS_SUBJECTS.agentSearch, {
      caller_id: call.caller.id,
      query: params.query,
      role: params.role,
      ...(params.states ? { states: params.states } : {}),
      limit: params.limit,
      ...(params.cursor ? { cursor: params.cursor } : {}),
      ...(endpoint ? { counterpart_id: endpoint.id } : {}),
    });
    return { items: found.items.map((item) => renderSearchItem(item.task, item.highlights)), next_cursor: found.next_cursor };
  }

  private async update(call: MethodCall): Promise<unknown> {
    const params = call.params;
    const taskId = parseTaskId(params);
    const transition = params.transition;
    if (typeof transition !== 'string' || !(TRANSITIONS as readonly string[]).includes(transition)) {
      throw invalidParams('transition', `must be one of ${TRANSITIONS.join(', ')}`);
    }
    const request: TransitionRequest = { caller_id: call.caller.id, task_id: taskId, transition: transition as Transition, history_length: 0 };
    const sessionId = optionalNonBlank(params, 'session_id', 'session_id', TASK_LIMITS.sessionIdChars);
    if (sessionId !== undefined) request.session_id = sessionId;
    const resultSummary = optionalNonBlank(params, 'result_summary', 'result_summary', TASK_LIMITS.textPartChars);
    if (resultSummary !== undefined) request.result_summary = resultSummary;
    const reason = optionalNonBlank(params, 'reason', 'reason', TASK_LIMITS.reasonChars);
    if (reason !== undefined) request.reason = reason;
    if (transition === 'request_input') request.message = parseRelayMessage(params);
    else if (params.message !== undefined && params.message !== null) request.message = parseRelayMessage(params);
    if (transition === 'cancel') request.cancel_mode = 'pending_only';
    const { counterpartId } = await this.counterpart(call);
    if (counterpartId !== undefined) request.counterpart_id = counterpartId;
    const reply = await this.rpc.request(TASKS_SUBJECTS.transition, request);
    return renderTransition(reply.task);
  }

  private async cancel(call: MethodCall): Promise<unknown> {
    const taskId = parseTaskId(call.params);
    const { counterpartId } = await this.counterpart(call);
    const reply = await this.rpc.request(TASKS_SUBJECTS.transition, {
      caller_id: call.caller.id,
      task_id: taskId,
      ...(counterpartId !== undefined ? { counterpart_id: counterpartId } : {}),
      transition: 'cancel',
      cancel_mode: 'pending_only',
      history_length: 0,
    });
    return { task_id: reply.task.id, status: { state: reply.task.state }, updated_at: reply.task.updated_at };
  }

  /**
   * The recipient of a new task: the `recipient` param; on `POST /a2a/{handle}` that handle
   * (a `recipient` naming someone else there is invalid).
   */
  private recipientHandle(call: MethodCall): string {
    const given = call.params.recipient;
    if (call.endpointHandle === null || (given !== undefined && given !== null)) {
      const recipient = requiredNonBlank(call.params, 'recipient', 'recipient', AGENT_LIMITS.handleChars).trim().toLowerCase();
      if (call.endpointHandle !== null && recipient !== call.endpointHandle) {
        throw invalidParams('recipient', `must be ${call.endpointHandle} (or omitted) on this agent's endpoint`);
      }
      return recipient;
    }
    return call.endpointHandle;
  }

  /** On an agent's endpoint only the tasks between the caller and that agent exist: that agent, for the tasks service to decide it. */
  private async counterpart(call: MethodCall): Promise<{ counterpartId?: string }> {
    const endpoint = await this.access.endpointAgent(call.endpointHandle);
    return endpoint ? { counterpartId: endpoint.id } : {};
  }
}
