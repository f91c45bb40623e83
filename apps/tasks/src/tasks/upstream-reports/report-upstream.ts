import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import { RelayError, type ParticipantRefDto, type UpstreamAppendRequest, type UpstreamReportReply, type UpstreamTransitionRequest } from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { SendTask } from '../use-cases/send-task';
import { TransitionTask } from '../use-cases/transition-task';
import { UpstreamRecipients } from './upstream-recipients';

interface RecipientRow {
  recipient_id: string;
  recipient_handle: string;
  recipient_name: string;
  recipient_role: string | null;
  hidden_from_recipient: boolean;
}

/**
 * The notifier's reports of what an upstream agent answered (decision 0025), made as the task's
 * recipient: the recipient is read from the task, never from the request, and must be an upstream
 * agent; a task hidden from its recipient (held for approval, or its hold ended other than
 * approved) takes no report. The send and transition rules then apply as to any recipient.
 */
@Injectable()
export class ReportUpstream {
  private readonly pool: pg.Pool;

  constructor(
    @Inject(DataSource) dataSource: DataSource,
    @Inject(SendTask) private readonly sending: SendTask,
    @Inject(TransitionTask) private readonly transitions: TransitionTask,
    @Inject(UpstreamRecipients) private readonly upstreams: UpstreamRecipients,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async append(request: UpstreamAppendRequest): Promise<UpstreamReportReply> {
    const caller = await this.upstreamRecipient(request.task_id);
    const { task } = await this.sending.send({
      caller,
      task_id: request.task_id,
      message: request.message,
      ...(request.artifacts ? { artifacts: request.artifacts } : {}),
      history_length: 0,
    });
    return { task_id: task.id, state: task.state };
  }

  async transition(request: UpstreamTransitionRequest): Promise<UpstreamReportReply> {
    const caller = await this.upstreamRecipient(request.task_id);
    const { task } = await this.transitions.transition({
      caller_id: caller.id,
      task_id: request.task_id,
      transition: request.transition,
      ...(request.message ? { message: request.message } : {}),
      ...(request.artifacts ? { artifacts: request.artifacts } : {}),
      ...(request.reason !== undefined ? { reason: request.reason } : {}),
      ...(request.result_summary !== undefined ? { result_summary: request.result_summary } : {}),
      history_length: 0,
    });
    return { task_id: task.id, state: task.state };
  }

  private async upstreamRecipient(taskId: string): Promise<ParticipantRefDto> {
    const { rows } = await this.pool.query<RecipientRow>(
      `SELECT "recipient_id", "recipient_handle", "recipient_name", "recipient_role", "hidden_from_recipient" FROM "tasks"."tasks" WHERE "id" = $1`,
      [taskId.toUpperCase()],
    );
    const [row] = rows;
    if (!row) throw new RelayError('thread_not_found', `No task with id ${taskId}`, { task_id: taskId });
    if (row.hidden_from_recipient) {
      throw new RelayError('not_a_participant', 'The task is held from its recipient (awaiting approval, or not approved): nothing is reported on it', {
        task_id: taskId,
      });
    }
    if (!(await this.upstreams.isUpstream(row.recipient_id, row.recipient_handle))) {
      throw new RelayError('not_a_participant', "The task's recipient is not an upstream agent: only its own calls change the task", { task_id: taskId });
    }
    return { id: row.recipient_id, handle: row.recipient_handle, name: row.recipient_name, role: row.recipient_role };
  }
}
