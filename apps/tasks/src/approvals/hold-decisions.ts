import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type pg from 'pg';
import { DataSource } from 'typeorm';
import {
  RelayError,
  type AnswerToolPromptRequest,
  type DecideHoldRequest,
  type PendingToolPromptsReply,
  type PendingToolPromptsRequest,
  type TaskView,
} from '@app/contracts';
import { TasksConfig } from '../tasks.config';
import { pgPoolOf } from '@app/database';
import { COMMITTED_EVENTS, type CommittedEvents } from '../outbox/committed-events';
import { toTaskView } from '../tasks/store/task-rows';
import { EXPIRED_HOLDS_SQL } from './hold-end.sql';
import { endHold } from './hold-end';
import { pendingToolPrompts } from './pending-tool-prompts';
import { answerToolPrompt } from './tool-prompt-answer';

/** Held tasks one expiry sweep ends at most; the next sweep takes the rest. */
const EXPIRY_BATCH = 100;

/**
 * Decisions of people: on held handoffs a person's approve or deny, and the sweep that rejects the holds past
 * their deadline (every RELAY_HOLD_EXPIRY_SWEEP_MS on each replica; the conditional update lets one win);
 * a person's answer to a tool prompt.
 */
@Injectable()
export class HoldDecisions implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(HoldDecisions.name);
  private readonly pool: pg.Pool;
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<number>;

  constructor(
    @Inject(DataSource) dataSource: DataSource,
    @Inject(TasksConfig) private readonly config: TasksConfig,
    @Inject(COMMITTED_EVENTS) private readonly committed: CommittedEvents,
  ) {
    this.pool = pgPoolOf(dataSource);
  }

  onModuleInit(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.expire().finally(() => (this.sweeping = undefined));
    }, this.config.RELAY_HOLD_EXPIRY_SWEEP_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  async decide(request: DecideHoldRequest): Promise<TaskView> {
    const comment = request.comment?.trim() || null;
    const decidedBy = request.decided_by_email ?? request.decided_by;
    const { task, artifacts, events } = await endHold(this.pool, request.task_id.toUpperCase(), { kind: request.decision, decidedBy, comment });
    this.committed.publishCommitted(events);
    return toTaskView(task, [], artifacts, 0);
  }

  /** A person's answer to a tool prompt of a handoff whose tool prompts people answer. */
  async answerToolPrompt(request: AnswerToolPromptRequest): Promise<TaskView> {
    const { task, artifacts } = await answerToolPrompt(this.pool, request);
    return toTaskView(task, [], artifacts, 0);
  }

  /** The open tool prompts people answer, oldest first. */
  pendingToolPrompts(request: PendingToolPromptsRequest): Promise<PendingToolPromptsReply> {
    return pendingToolPrompts(this.pool, request.limit, new Date(), request.orgs);
  }

  /** Rejects the held tasks past their deadline (one batch); a task decided meanwhile is left as it is. */
  async expire(now = new Date()): Promise<number> {
    let expired = 0;
    try {
      const { rows } = await this.pool.query<{ id: string }>({ name: 'tasks-expired-holds', text: EXPIRED_HOLDS_SQL, values: [now, EXPIRY_BATCH] });
      for (const { id } of rows) {
        try {
          const { events } = await endHold(this.pool, id, { kind: 'expire' }, now);
          this.committed.publishCommitted(events);
          expired += 1;
        } catch (error) {
          if (!(error instanceof RelayError && (error.reason === 'state_changed' || error.reason === 'not_held'))) throw error;
        }
      }
    } catch (error) {
      this.logger.warn({ err: error }, 'hold expiry sweep failed; the next one tries again');
    }
    return expired;
  }
}
