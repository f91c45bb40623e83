import { Inject, Injectable } from '@nestjs/common';
import {
  assertMessageFitsReplies,
  RelayError,
  TASK_LIMITS,
  TASKS_SUBJECTS,
  TRANSITIONS,
  type AgentPublicProfile,
  type ParticipantRef,
  type SendRequest,
  type Transition,
  type TransitionRequest,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { DirectoryLookups } from '../../directory/directory-lookups';
import type { DialectMethods, JsonRpcCall } from '../json-rpc.types';
import {
  invalid,
  optionalString,
  parseAfterSequenceNo,
  parseArtifacts,
  parseIdempotencyKey,
  parseIntent,
  parseListParams,
  parseMessage,
  parseMetadata,
  parseProposedAction,
  parseTaskId,
  requiredString,
} from './agentrelay-params';
import { renderListItem, renderRelayTask, renderTransition } from './agentrelay-render';

function participant(agent: { id: string; handle: string; name: string; role: string | null }): ParticipantRef {
  return { id: agent.id, handle: agent.handle, name: agent.name, role: agent.role };
}

/**
 * The AgentRelay dialect on `POST /a2a`: message/send, tasks/get, tasks/list, tasks/update and
 * tasks/cancel, in its shapes and error codes (docs/dialects.md#agentrelay). The edge authenticates, asks the directory to admit a new task's
 * recipient, and runs the command on the tasks service.
 */
@Injectable()
export class AgentRelayMethods implements DialectMethods {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
  ) {}

  handle(call: JsonRpcCall): Promise<unknown> {
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
      default:
        throw new RelayError('method_not_found', `Method '${call.method}' not found`, { method: call.method });
    }
  }

  private async send(call: JsonRpcCall): Promise<unknown> {
    const params = call.params;
    const taskId = params.task_id === null || params.task_id === undefined ? undefined : parseTaskId(params);
    const message = parseMessage(params);
    assertMessageFitsReplies(message, this.rpc.maxPayloadBytes);
    const intent = parseIntent(params);
    const proposedAction = parseProposedAction(params);
    const artifacts = parseArtifacts(params);
    const metadata = parseMetadata(params);
    const idempotencyKey = parseIdempotencyKey(metadata);
    const contextId = optionalString(params, 'context_id');
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
      const recipient = await this.directory.admit(call.caller.handle, recipientHandle);
      const reply = await this.rpc.request(TASKS_SUBJECTS.send, {
        ...common,
        caller: participant(call.caller),
        recipient: participant(recipient),
        ...(metadata !== undefined ? { metadata } : {}),
      });
      // A create always answers pending: an idempotent retry gets that same original result.
      return { task_id: reply.task.id, status: { state: reply.idempotent_replay ? 'pending' : reply.task.state }, created_at: reply.task.created_at };
    }
    if (params.recipient !== undefined && params.recipient !== null) requiredString(params, 'recipient');
    await this.assertEndpointPair(call, taskId);
    const reply = await this.rpc.request(TASKS_SUBJECTS.send, { ...common, caller: participant(call.caller), task_id: taskId });
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
  private async get(call: JsonRpcCall): Promise<unknown> {
    const taskId = parseTaskId(call.params);
    const afterSequenceNo = parseAfterSequenceNo(call.params);
    await this.assertEndpointPair(call, taskId);
    const task = await this.rpc.request(TASKS_SUBJECTS.get, { caller_id: call.caller.id, task_id: taskId, after_sequence_no: afterSequenceNo });
    return renderRelayTask(task);
  }

  private async list(call: JsonRpcCall): Promise<unknown> {
    const params = parseListParams(call.params);
    const endpoint = await this.endpointAgent(call);
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

  private async update(call: JsonRpcCall): Promise<unknown> {
    const params = call.params;
    const taskId = parseTaskId(params);
    const transition = params.transition;
    if (typeof transition !== 'string' || !(TRANSITIONS as readonly string[]).includes(transition)) {
      throw invalid('transition', `must be one of ${TRANSITIONS.join(', ')}`);
    }
    const request: TransitionRequest = { caller_id: call.caller.id, task_id: taskId, transition: transition as Transition, history_length: 0 };
    const sessionId = optionalString(params, 'session_id');
    if (sessionId !== undefined) request.session_id = sessionId;
    const resultSummary = optionalString(params, 'result_summary', 'result_summary', 100_000);
    if (resultSummary !== undefined) request.result_summary = resultSummary;
    const reason = optionalString(params, 'reason', 'reason', 4000);
    if (reason !== undefined) request.reason = reason;
    if (transition === 'request_input') request.message = parseMessage(params);
    else if (params.message !== undefined && params.message !== null) request.message = parseMessage(params);
    if (transition === 'cancel') request.cancel_mode = 'pending_only';
    await this.assertEndpointPair(call, taskId);
    const reply = await this.rpc.request(TASKS_SUBJECTS.transition, request);
    return renderTransition(reply.task);
  }

  private async cancel(call: JsonRpcCall): Promise<unknown> {
    const taskId = parseTaskId(call.params);
    await this.assertEndpointPair(call, taskId);
    const reply = await this.rpc.request(TASKS_SUBJECTS.transition, {
      caller_id: call.caller.id,
      task_id: taskId,
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
  private recipientHandle(call: JsonRpcCall): string {
    const given = call.params.recipient;
    if (call.endpointHandle === null || (given !== undefined && given !== null)) {
      const recipient = requiredString(call.params, 'recipient', 'recipient', 255).trim().toLowerCase();
      if (call.endpointHandle !== null && recipient !== call.endpointHandle) {
        throw invalid('recipient', `must be ${call.endpointHandle} (or omitted) on this agent's endpoint`);
      }
      return recipient;
    }
    return call.endpointHandle;
  }

  /** The agent of `POST /a2a/{handle}`, or null on `POST /a2a`. */
  private async endpointAgent(call: JsonRpcCall): Promise<AgentPublicProfile | null> {
    if (call.endpointHandle === null) return null;
    return this.directory.profile(call.endpointHandle);
  }

  /** On an agent's own endpoint only the tasks between the caller and that agent exist. */
  private async assertEndpointPair(call: JsonRpcCall, taskId: string): Promise<void> {
    const endpoint = await this.endpointAgent(call);
    if (!endpoint) return;
    const task = await this.rpc.request(TASKS_SUBJECTS.get, { caller_id: call.caller.id, task_id: taskId, history_length: 0, mark_read: false });
    const other = task.sender.id === call.caller.id ? task.recipient : task.sender;
    if (other.id !== endpoint.id)
      throw new RelayError('thread_not_found', `No thread with id ${taskId} between you and ${endpoint.handle}`, { task_id: taskId });
  }
}
