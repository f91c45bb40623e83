import { Inject, Injectable, Logger } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { RelayError, type TransitionReply, type TransitionRequest } from '@app/contracts';
import { validateArtifactInputs } from '../rules/artifact-rules';
import { duplicateMessageIdOr } from '../store/task-repository';
import { toMessageView, toTaskView } from '../store/task-rows';
import { changeHistory } from '../store/change-write';
import { transitionTask } from '../store/transition-write';
import { pgPoolOf } from '@app/database';
import { COMMITTED_EVENTS, type CommittedEvents } from '../../outbox/committed-events';
import { OrgStoredBytesQuotas } from '../org-quotas/org-stored-bytes-quotas';
import type { StoredBytesQuotas } from '../store/stored-bytes';

/** What a transition request must carry before the task is read: a question, something to report, artifacts within their rules. */
export function checkTransitionRequest(request: Pick<TransitionRequest, 'transition' | 'message' | 'artifacts'>): void {
  if (request.transition === 'request_input' && !request.message) {
    throw new RelayError('invalid_params', 'request_input needs a message (the question)', { field: 'message' });
  }
  if (request.transition === 'progress' && !request.message && !(request.artifacts && request.artifacts.length > 0)) {
    throw new RelayError('invalid_params', 'a status update needs a message or artifacts', { field: 'message' });
  }
  validateArtifactInputs(request.artifacts);
}

/**
 * A transition (accept, complete, cancel, decline, fail, request input) or a progress update,
 * decided by a conditional UPDATE: of two callers racing, one wins and the other is told.
 */
@Injectable()
export class TransitionTask {
  private readonly logger = new Logger(TransitionTask.name);

  /** The pg pool behind TypeORM: the transition's statement goes to it directly. */
  private readonly pool: pg.Pool;

  constructor(
    @Inject(DataSource) dataSource: DataSource,
    @Inject(COMMITTED_EVENTS) private readonly committed: CommittedEvents,
    @Inject(OrgStoredBytesQuotas) private readonly storedBytes: StoredBytesQuotas,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async transition(request: TransitionRequest): Promise<TransitionReply> {
    checkTransitionRequest(request);
    try {
      const { task, message, artifacts, unread, events } = await transitionTask(this.pool, request, this.storedBytes);
      this.committed.publishCommitted(events);
      this.logger.debug({ task_id: task.id, transition: request.transition, to: task.state, actor_id: request.caller_id }, 'task transition');
      const history = await changeHistory(this.pool, task, request.history_length);
      return { task: toTaskView(task, history, artifacts, unread), message: message ? toMessageView(message) : null };
    } catch (error) {
      throw duplicateMessageIdOr(error);
    }
  }
}
