import { Inject, Injectable } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import {
  RelayError,
  UPSTREAM_REPORT_COMMANDS,
  type ParticipantRefDto,
  type SendRequest,
  type TaskState,
  type UpstreamAppendRequest,
  type UpstreamApplyReply,
  type UpstreamApplyRequest,
  type UpstreamReportReply,
  type UpstreamReportStep,
  type UpstreamTransitionRequest,
} from '@app/contracts';
import { pgPoolOf } from '@app/database';
import { COMMITTED_EVENTS, type CommittedEvents } from '../../outbox/committed-events';
import { validateArtifactInputs } from '../rules/artifact-rules';
import { changeTaskInSteps, type LoadedTask, type TaskChange } from '../store/change-write';
import { LOAD_TASK_FOR_REPORT_SQL } from '../store/sql/change-task.sql';
import { duplicateMessageIdOr, pgError } from '../store/task-repository';
import { transitionChange } from '../store/transition-write';
import { OrgStoredBytesQuotas } from '../org-quotas/org-stored-bytes-quotas';
import type { StoredBytesQuotas } from '../store/stored-bytes';
import type { TaskRow } from '../store/task-rows';
import { sendRequestHash } from '../use-cases/send-idempotency';
import { appendChange, SendTask } from '../use-cases/send-task';
import { checkTransitionRequest, TransitionTask } from '../use-cases/transition-task';
import { CreatedForUpstream } from './created-for-upstream';
import { UpstreamRecipients } from './upstream-recipients';

/**
 * Refusals of a change decided on the task as read, before anything of it is written (the
 * transaction goes on): the change was made already (a repeat after a crash), or the state moved on.
 */
const ALREADY_DONE: ReadonlySet<string> = new Set(['invalid_transition', 'state_changed']);

interface RecipientRow {
  recipient_id: string;
  recipient_handle: string;
  recipient_name: string;
  recipient_role: string | null;
  hidden_from_recipient: boolean;
  state: TaskState;
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
    @Inject(COMMITTED_EVENTS) private readonly committed: CommittedEvents,
    @Inject(OrgStoredBytesQuotas) private readonly storedBytes: StoredBytesQuotas,
    @Inject(CreatedForUpstream) private readonly createdForUpstream: CreatedForUpstream,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  async append(request: UpstreamAppendRequest): Promise<UpstreamReportReply> {
    const { caller } = await this.upstreamRecipient(request.task_id);
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
    const { caller } = await this.upstreamRecipient(request.task_id);
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

  /**
   * The changes one answer of the upstream agent needs, decided in order and written in one
   * statement (one transaction). A change whose message the task holds already was made (its
   * message, artifacts and state commit together) and is skipped; a transition refused as already
   * made or overtaken is skipped; the task ended on the sender's side stops the rest (`ended`).
   * Anything else refused writes none of them.
   */
  async apply(request: UpstreamApplyRequest): Promise<UpstreamApplyReply> {
    for (const [index, step] of request.steps.entries()) checkStep(step, index);
    const ids = request.steps.flatMap((step) => (step.message?.message_id !== undefined ? [step.message.message_id] : []));
    const repeated = ids.find((id, index) => ids.indexOf(id) !== index);
    if (repeated !== undefined) throw new RelayError('invalid_params', `steps: the message id ${repeated} is given twice`, { field: 'steps' });
    // Messages of a report made before (after a crash or a lost reply), read with the task; the
    // first report of a task this process created starts from the create's copy, which holds none.
    const kept = this.createdForUpstream.take(request.task_id);
    const { held_message_ids: heldIds, ...known } = kept ? { ...kept, held_message_ids: [] } : await loadTaskForReport(this.pool, request.task_id, ids);
    const caller = await this.upstreamCaller(request.task_id, known);
    const held = new Set(heldIds);
    const decisions = request.steps
      .filter((step) => step.message?.message_id === undefined || !held.has(step.message.message_id))
      .map(
        (step) =>
          (current: TaskRow): TaskChange =>
            this.decide(request.task_id, caller, step, current),
      );
    try {
      const written = await changeTaskInSteps(
        this.pool,
        request.task_id,
        decisions,
        (error) =>
          error instanceof RelayError ? (error.reason === 'thread_terminal' ? 'end' : ALREADY_DONE.has(error.reason) ? 'skip' : undefined) : undefined,
        (latest) =>
          new RelayError('state_changed', 'The task changed while this answer was written: nothing of it was kept, report it again', { state: latest.state }),
        this.storedBytes,
        known,
      );
      this.committed.publishCommitted(written.events);
      return { task_id: request.task_id.toUpperCase(), state: written.task.state, ended: written.ended };
    } catch (error) {
      const { code, constraint } = pgError(error);
      if (code === '23505' && constraint === 'idempotency_keys_pkey') {
        // The recipient's message of that id was stored meanwhile (another report of the same answer): made again, it is skipped.
        throw new RelayError('state_changed', 'A message of this answer was stored meanwhile: nothing of it was kept, report it again', {
          task_id: request.task_id,
        });
      }
      throw duplicateMessageIdOr(error);
    }
  }

  /** What one step of a report makes of the task as the steps before it leave it. */
  private decide(taskId: string, caller: ParticipantRefDto, step: UpstreamReportStep, current: TaskRow): TaskChange {
    if (step.kind === 'append') {
      const send: SendRequest = {
        caller,
        task_id: taskId,
        message: step.message as SendRequest['message'],
        ...(step.artifacts ? { artifacts: step.artifacts } : {}),
        history_length: 0,
      };
      return appendChange(current, send, sendRequestHash(send));
    }
    return transitionChange(current, {
      caller_id: caller.id,
      task_id: taskId,
      transition: step.transition as NonNullable<UpstreamReportStep['transition']>,
      ...(step.message ? { message: step.message } : {}),
      ...(step.artifacts ? { artifacts: step.artifacts } : {}),
      ...(step.reason !== undefined ? { reason: step.reason } : {}),
      ...(step.result_summary !== undefined ? { result_summary: step.result_summary } : {}),
      history_length: 0,
    });
  }

  private async upstreamRecipient(taskId: string): Promise<{ caller: ParticipantRefDto; state: TaskState }> {
    const { rows } = await this.pool.query<RecipientRow>(
      `SELECT "recipient_id", "recipient_handle", "recipient_name", "recipient_role", "hidden_from_recipient", "state" FROM "tasks"."tasks" WHERE "id" = $1`,
      [taskId.toUpperCase()],
    );
    const [row] = rows;
    if (!row) throw new RelayError('thread_not_found', `No task with id ${taskId}`, { task_id: taskId });
    return { caller: await this.upstreamCaller(taskId, row), state: row.state };
  }

  /** The task's recipient as the caller of a report, refused unless it is an upstream agent the task is not hidden from. */
  private async upstreamCaller(taskId: string, row: RecipientRow): Promise<ParticipantRefDto> {
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

/** A step's own shape: an append carries a message, a transition its command and what that command needs. */
function checkStep(step: UpstreamReportStep, index: number): void {
  const field = `steps[${index}]`;
  const refuse = (at: string, problem: string): never => {
    throw new RelayError('invalid_params', `${field}${at}: ${problem}`, { field: `${field}${at}` });
  };
  if (typeof step !== 'object' || step === null || Array.isArray(step)) refuse('', 'must be an object');
  if (step.kind !== 'append' && step.kind !== 'transition') refuse('.kind', 'must be append or transition');
  if (step.transition !== undefined && !(UPSTREAM_REPORT_COMMANDS as readonly string[]).includes(step.transition)) {
    refuse('.transition', `must be one of ${UPSTREAM_REPORT_COMMANDS.join(', ')}`);
  }
  for (const name of ['reason', 'result_summary'] as const)
    if (step[name] !== undefined && typeof step[name] !== 'string') refuse(`.${name}`, 'must be a string');
  if (step.message !== undefined && (typeof step.message !== 'object' || step.message === null || !Array.isArray(step.message.parts))) {
    refuse('.message', 'must be a message with parts');
  }
  if (step.artifacts !== undefined && !Array.isArray(step.artifacts)) refuse('.artifacts', 'must be an array');
  if (step.kind === 'append') {
    if (!step.message) throw new RelayError('invalid_params', `${field}.message: an append carries a message`, { field: `${field}.message` });
    if (step.transition !== undefined || step.reason !== undefined || step.result_summary !== undefined) {
      throw new RelayError('invalid_params', `${field}: an append carries no transition, reason or result_summary`, { field });
    }
    validateArtifactInputs(step.artifacts);
    return;
  }
  if (step.transition === undefined) throw new RelayError('invalid_params', `${field}.transition is required`, { field: `${field}.transition` });
  checkTransitionRequest({ transition: step.transition, message: step.message, artifacts: step.artifacts });
}

/** The task with its artifacts, and which of `ids` it holds already as the recipient's messages (a report made before); or `thread_not_found`. */
async function loadTaskForReport(pool: pg.Pool, taskId: string, ids: string[]): Promise<LoadedTask & { held_message_ids: string[] }> {
  const { rows } = await pool.query<LoadedTask & { held_message_ids: string[] }>({
    name: 'tasks-load-task-for-report',
    text: LOAD_TASK_FOR_REPORT_SQL,
    values: [taskId.toUpperCase(), ids],
  });
  if (!rows[0]) throw new RelayError('thread_not_found', `No task with id ${taskId}`, { task_id: taskId });
  return rows[0];
}
