import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import {
  RelayError,
  isTerminalState,
  type ArtifactInput,
  type Intent,
  type PartView,
  type ProposedActionDto,
  type SendReply,
  type SendRequest,
} from '@app/contracts';
import { validateArtifactInputs } from './artifact-rules';
import { idempotencyKeys, SendIdempotency, sendRequestHash } from './send-idempotency';
import { partyOf } from './state-machine';
import { createTaskInOneStatement, creatableInOneStatement } from './task-creation';
import { writeArtifactEvents, writeTaskEvent } from './task-events';
import { duplicateMessageIdOr, pgError, pgPoolOf, plainParts, TaskRepository } from './task-repository';
import { toMessageRef, toTaskView } from './task-rows';

function validateIntent(intent: Intent | undefined, proposedAction: ProposedActionDto | null | undefined): void {
  const hasAction = proposedAction !== undefined && proposedAction !== null;
  if (intent === 'propose_action' && !hasAction) {
    throw new RelayError('invalid_intent_payload', 'intent propose_action requires a proposed_action', { field: 'proposed_action', intent });
  }
  if (intent !== 'propose_action' && hasAction) {
    throw new RelayError('invalid_intent_payload', `proposed_action must be null or omitted for intent ${intent ?? 'inform'}`, {
      field: 'proposed_action',
      intent: intent ?? 'inform',
    });
  }
}

/**
 * A send: a new task (in one statement when it can), or a message appended to an existing one,
 * which resumes a task waiting for the sender's input. Every change of a send (task, message,
 * artifacts, audit row, idempotency keys, outbox event) commits together.
 */
@Injectable()
export class SendTask {
  /** The pg pool behind TypeORM: the one-statement create goes to it directly. */
  private readonly pool: pg.Pool;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(TaskRepository) private readonly repository: TaskRepository,
    @Inject(SendIdempotency) private readonly idempotency: SendIdempotency,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async send(request: SendRequest): Promise<SendReply> {
    if (request.task_id === undefined && request.recipient === undefined) {
      throw new RelayError('invalid_params', 'recipient is required to create a task', { field: 'recipient' });
    }
    if (request.task_id === undefined && request.recipient?.id === request.caller.id) {
      throw new RelayError('invalid_params', 'recipient cannot be yourself: a handoff goes to another agent', { field: 'recipient' });
    }
    if (request.task_id === undefined || request.intent !== undefined || request.proposed_action != null) {
      validateIntent(request.intent, request.proposed_action);
    }
    validateArtifactInputs(request.artifacts);
    const hash = sendRequestHash(request);
    for (let attempt = 0; ; attempt++) {
      try {
        if (attempt === 0 && creatableInOneStatement(request)) {
          const created = await this.createInOneStatement(request, hash);
          if (created) return created;
        }
        return await this.dataSource.transaction(async (manager) => {
          const replay = await this.idempotency.replay(manager, request, hash);
          if (replay) return replay;
          return request.task_id === undefined ? this.create(manager, request, hash) : this.append(manager, request, hash);
        });
      } catch (error) {
        const { code, constraint } = pgError(error);
        if (code === '23505' && constraint === 'idempotency_keys_pkey' && attempt < 2) continue;
        throw duplicateMessageIdOr(error);
      }
    }
  }

  /** A create in one round trip; null (nothing written) when an idempotency key is already known. */
  private async createInOneStatement(request: SendRequest, hash: string): Promise<SendReply | null> {
    const artifactParts = (artifact: ArtifactInput): PartView[] => (artifact.parts ? plainParts(artifact.parts) : []);
    const created = await createTaskInOneStatement(this.pool, request, plainParts(request.message.parts), artifactParts, idempotencyKeys(request), hash);
    if (!created) return null;
    const history = request.history_length === 0 ? [] : [created.message];
    return {
      task: toTaskView(created.task, history, created.artifacts, 0),
      message: toMessageRef(created.message),
      created: true,
      idempotent_replay: false,
    };
  }

  private async create(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply> {
    const contextId = await this.repository.claimContext(manager, request.context_id, request.caller.id);
    const now = new Date();
    const parts = plainParts(request.message.parts);
    const task = await this.repository.insertTask(manager, request, contextId, parts, now);
    const message = await this.repository.insertMessage(manager, task, 'sender', 1, request.message, parts, now);
    await this.repository.upsertArtifacts(manager, task.id, request.artifacts, now);
    await this.repository.recordTransition(manager, {
      taskId: task.id,
      actorId: request.caller.id,
      transition: 'create',
      fromState: null,
      toState: 'pending',
      at: now,
    });
    await this.idempotency.remember(manager, request, hash, message, true);
    await writeTaskEvent(manager, 'created', task, message, now);
    return {
      task: await this.repository.view(manager, task, request.history_length, 0),
      message: toMessageRef(message),
      created: true,
      idempotent_replay: false,
    };
  }

  private async append(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply> {
    const current = await this.repository.loadTask(manager, request.task_id as string, true);
    const party = partyOf(current, request.caller.id, request.counterpart_id);
    if (request.context_id !== undefined && request.context_id !== current.context_id) {
      throw new RelayError('invalid_params', "context_id does not match the task's context", { field: 'context_id' });
    }
    if (isTerminalState(current.state)) {
      throw new RelayError('thread_terminal', `The thread is ${current.state}; no more messages can be added`, { state: current.state });
    }
    const now = new Date();
    const resumes = current.state === 'input_required' && party === 'sender';
    let task = current;
    if (resumes) {
      task = await this.repository.resume(manager, current.id, now);
      await this.repository.recordTransition(manager, {
        taskId: task.id,
        actorId: request.caller.id,
        transition: 'resume',
        fromState: 'input_required',
        toState: 'accepted',
        at: now,
      });
    }
    const appended = await this.repository.appendMessage(manager, task, party, request.message, now);
    task = appended.task;
    const artifacts = await this.repository.upsertArtifacts(manager, task.id, request.artifacts, now);
    await this.idempotency.remember(manager, request, hash, appended.message, false);
    await writeArtifactEvents(manager, task, artifacts, now);
    await writeTaskEvent(manager, 'message_appended', task, appended.message, now);
    if (resumes) await writeTaskEvent(manager, 'accepted', task, appended.message, now);
    const unread = await this.repository.unreadCount(manager, task.id, request.caller.id);
    return {
      task: await this.repository.view(manager, task, request.history_length, unread),
      message: toMessageRef(appended.message),
      created: false,
      idempotent_replay: false,
    };
  }
}
