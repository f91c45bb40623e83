import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { RelayError, isTerminalState, type Intent, type ProposedActionDto, type SendReply, type SendRequest } from '@app/contracts';
import { validateArtifactInputs } from './artifact-rules';
import { idempotencyKeys, SendIdempotency, sendRequestHash } from './send-idempotency';
import { partyOf } from './state-machine';
import { createTask } from './task-creation';
import { writeArtifactEvents, writeTaskEvent } from './task-events';
import { duplicateMessageIdOr, pgError, pgPoolOf, TaskRepository } from './task-repository';
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
 * A send: a new task (in one statement), or a message appended to an existing one,
 * which resumes a task waiting for the sender's input. Every change of a send (task, message,
 * artifacts, audit row, idempotency keys, outbox event) commits together.
 */
@Injectable()
export class SendTask {
  /** The pg pool behind TypeORM: the create's statement goes to it directly. */
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
    return request.task_id === undefined ? this.create(request, hash) : this.append(request, hash);
  }

  /**
   * The create: its one statement, or, when one of the sender's keys is already known (a retry,
   * or the loser of two concurrent creates with one key), the first send's answer again.
   */
  private async create(request: SendRequest, hash: string): Promise<SendReply> {
    for (let attempt = 0; ; attempt++) {
      try {
        const created = await createTask(this.pool, request, idempotencyKeys(request), hash);
        if (created) {
          return {
            task: toTaskView(created.task, request.history_length === 0 ? [] : [created.message], created.artifacts, 0),
            message: toMessageRef(created.message),
            created: true,
            idempotent_replay: false,
          };
        }
        const replay = await this.dataSource.transaction((manager) => this.idempotency.replay(manager, request, hash));
        if (replay) return replay;
        // The known key was deleted (retention) between the create and the replay: create again.
        if (attempt >= 2) throw new Error('A send key kept appearing and disappearing');
      } catch (error) {
        const { code, constraint } = pgError(error);
        if (code === '23505' && constraint === 'idempotency_keys_pkey' && attempt < 2) continue;
        throw duplicateMessageIdOr(error);
      }
    }
  }

  /** An append in one transaction, on the task's locked row; a retry with known keys gets the first answer again. */
  private async append(request: SendRequest, hash: string): Promise<SendReply> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.dataSource.transaction(async (manager) => {
          const replay = await this.idempotency.replay(manager, request, hash);
          return replay ?? this.appendMessage(manager, request, hash);
        });
      } catch (error) {
        const { code, constraint } = pgError(error);
        if (code === '23505' && constraint === 'idempotency_keys_pkey' && attempt < 2) continue;
        throw duplicateMessageIdOr(error);
      }
    }
  }

  private async appendMessage(manager: EntityManager, request: SendRequest, hash: string): Promise<SendReply> {
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
