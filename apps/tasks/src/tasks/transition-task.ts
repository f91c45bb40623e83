import { Inject, Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { DataSource, type EntityManager } from 'typeorm';
import { RelayError, type TransitionReply, type TransitionRequest } from '@app/contracts';
import { validateArtifactInputs } from './artifact-rules';
import { checkTransition, partyOf } from './state-machine';
import { writeArtifactEvents, writeTaskEvent } from './task-events';
import { duplicateMessageIdOr, pgPoolOf, TaskRepository } from './task-repository';
import { toMessageView, toTaskView, type MessageRow, type TaskRow } from './task-rows';
import { transitionableInOneStatement, transitionInOneStatement } from './task-transition';

/**
 * A transition (accept, complete, cancel, decline, fail, request input) or a progress update,
 * decided by a conditional UPDATE: of two callers racing, one wins and the other is told.
 */
@Injectable()
export class TransitionTask {
  private readonly logger = new Logger(TransitionTask.name);

  /** The pg pool behind TypeORM: the one-statement transition goes to it directly. */
  private readonly pool: pg.Pool;

  constructor(
    @Inject(DataSource) private readonly dataSource: DataSource,
    @Inject(TaskRepository) private readonly repository: TaskRepository,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async transition(request: TransitionRequest): Promise<TransitionReply> {
    if (request.transition === 'request_input' && !request.message) {
      throw new RelayError('invalid_params', 'request_input needs a message (the question)', { field: 'message' });
    }
    if (request.transition === 'progress' && !request.message && !(request.artifacts && request.artifacts.length > 0)) {
      throw new RelayError('invalid_params', 'a status update needs a message or artifacts', { field: 'message' });
    }
    validateArtifactInputs(request.artifacts);
    if (transitionableInOneStatement(request)) {
      const { task, artifacts, unread } = await transitionInOneStatement(this.pool, request);
      this.logger.debug({ task_id: task.id, transition: request.transition, to: task.state, actor_id: request.caller_id }, 'task transition');
      return { task: toTaskView(task, [], artifacts, unread), message: null };
    }
    try {
      return await this.dataSource.transaction((manager) => this.apply(manager, request));
    } catch (error) {
      throw duplicateMessageIdOr(error);
    }
  }

  private async apply(manager: EntityManager, request: TransitionRequest): Promise<TransitionReply> {
    const current = await this.repository.loadTask(manager, request.task_id);
    const party = partyOf(current, request.caller_id, request.counterpart_id);
    const rule = checkTransition(request.transition, request.cancel_mode, current.state, party);
    const now = new Date();
    let task: TaskRow;
    if (rule.to) {
      const changed = await this.repository.changeState(manager, current, rule.to, now, { resultSummary: request.result_summary, reason: request.reason });
      if (!changed) {
        const latest = await this.repository.loadTask(manager, request.task_id);
        throw new RelayError('state_changed', `Another caller changed the task from ${current.state} to ${latest.state} first`, {
          expected_state: current.state,
          state: latest.state,
        });
      }
      task = changed;
      this.logger.log({ task_id: task.id, transition: request.transition, from: current.state, to: rule.to, actor_id: request.caller_id }, 'task transition');
      await this.repository.recordTransition(manager, {
        taskId: task.id,
        actorId: request.caller_id,
        transition: request.transition,
        fromState: current.state,
        toState: rule.to,
        sessionId: request.session_id ?? null,
        reason: request.reason ?? null,
        at: now,
      });
    } else {
      task = await this.repository.loadTask(manager, request.task_id, true);
      if (task.state !== current.state && !rule.from.includes(task.state)) {
        throw new RelayError('state_changed', `Another caller changed the task to ${task.state} first`, {
          expected_state: current.state,
          state: task.state,
        });
      }
    }
    let message: MessageRow | null = null;
    if (request.message) {
      ({ task, message } = await this.repository.appendMessage(manager, task, party, request.message, now));
    }
    const artifacts = await this.repository.upsertArtifacts(manager, task.id, request.artifacts, now);
    await writeArtifactEvents(manager, task, artifacts, now);
    if (rule.event) await writeTaskEvent(manager, rule.event, task, message, now);
    else if (message) await writeTaskEvent(manager, 'message_appended', task, message, now);
    else if (!rule.to) await this.repository.touch(manager, task.id, now);
    return {
      task: await this.repository.view(manager, task, request.history_length, await this.repository.unreadCount(manager, task.id, request.caller_id)),
      message: message ? toMessageView(message) : null,
    };
  }
}
