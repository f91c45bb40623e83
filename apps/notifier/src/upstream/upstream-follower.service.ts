import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { Message, Task } from '@a2a-js/sdk';
import { isTerminalState, RelayError, TASKS_SUBJECTS, type ParticipantRef } from '@app/contracts';
import { NatsRpcClient, WakeableDelay } from '@app/messaging';
import { NotifierConfig } from '../notifier.config';
import { DirectoryClient } from '../targets/directory-client.service';
import { guardedFetch } from './guarded-fetch';
import { RELAY_TASK_HEADER, upstreamClient } from './upstream-client';
import { credentialHeaders, UpstreamCredentialsService } from './upstream-credentials.service';
import { planReport, taskOfMessage, type ReportedProgress, type ReportStep } from './upstream-mapping';

/** Follow rows taken in one round, at most. */
const ROUND_SIZE = 16;
/** How long a poll holds its row; a process that dies holding one loses it then. */
const LEASE_MS = 60_000;
/** The longest the follower sleeps when nothing wakes it (another replica's new rows are found then). */
const IDLE_MAX_MS = 1000;

export interface FollowStart {
  taskId: string;
  recipient: ParticipantRef;
  sender: string;
  upstreamTaskId: string | null;
  upstreamContextId: string | null;
  answer: Message | null;
  reported: ReportedProgress;
}

interface FollowRow {
  task_id: string;
  recipient: ParticipantRef;
  sender: string;
  upstream_task_id: string | null;
  upstream_context_id: string | null;
  answer: Message | null;
  reported: ReportedProgress;
  poll_interval_ms: number;
  polls: number;
}

/** Errors of a report step that mean it was already made (a retry after a crash) or can no longer be. */
const ALREADY_DONE: ReadonlySet<string> = new Set(['invalid_transition', 'state_changed']);

/**
 * Follows each task delivered to an upstream agent until it ends: polls the upstream's `GetTask`
 * (every RELAY_UPSTREAM_POLL_MIN_MS while it changes, doubling up to RELAY_UPSTREAM_POLL_MAX_MS
 * while it does not), and makes what it shows into the relay task's own changes, as the
 * recipient, through the tasks service: the upstream's agent messages, artifacts and states
 * become the relay task's messages, artifacts and transitions, so `GetTask`, streams and webhooks
 * see them as for any recipient. What was reported is kept with the row, so a restart repeats no
 * change (and a change repeated after a crash is an idempotent replay or a refused transition).
 */
@Injectable()
export class UpstreamFollowerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(UpstreamFollowerService.name);
  private readonly delay = new WakeableDelay();
  private loop: Promise<void> | null = null;
  private stopping = false;

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(DirectoryClient) private readonly directory: DirectoryClient,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.delay.interrupt();
    await this.loop;
  }

  /** Records a delivered task beside its upstream task (once: a repeated delivery adds nothing) and polls it at once. */
  async follow(start: FollowStart): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO "notifier"."upstream_tasks"
         ("task_id", "recipient", "sender", "upstream_task_id", "upstream_context_id", "answer", "status", "reported", "next_poll_at", "poll_interval_ms")
       VALUES ($1, $2, $3, $4, $5, $6, 'following', $7, now(), $8)
       ON CONFLICT ("task_id") DO NOTHING`,
      [
        start.taskId,
        JSON.stringify(start.recipient),
        start.sender,
        start.upstreamTaskId,
        start.upstreamContextId,
        start.answer ? JSON.stringify(start.answer) : null,
        JSON.stringify(start.reported),
        this.config.RELAY_UPSTREAM_POLL_MIN_MS,
      ],
    );
    this.delay.wake();
  }

  /** The upstream task a relay task was delivered as (null: not delivered yet). */
  async find(taskId: string): Promise<{ upstreamTaskId: string | null; upstreamContextId: string | null; following: boolean } | null> {
    const rows = (await this.dataSource.query(
      `SELECT "upstream_task_id", "upstream_context_id", "status" FROM "notifier"."upstream_tasks" WHERE "task_id" = $1`,
      [taskId],
    )) as Array<{ upstream_task_id: string | null; upstream_context_id: string | null; status: string }>;
    const row = rows[0];
    return row ? { upstreamTaskId: row.upstream_task_id, upstreamContextId: row.upstream_context_id, following: row.status === 'following' } : null;
  }

  /**
   * The sender's message went upstream: the relay task is back at work (a task waiting for the
   * sender's input resumed when the sender wrote), so the upstream is polled at once and again
   * as often as while it changes.
   */
  async nudge(taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "next_poll_at" = now(), "poll_interval_ms" = $2, "updated_at" = now()
       WHERE "task_id" = $1 AND "status" = 'following'`,
      [taskId, this.config.RELAY_UPSTREAM_POLL_MIN_MS],
    );
    this.delay.wake();
  }

  /** The relay task ended on the sender's side (canceled, and the cancel went upstream): nothing more to follow. */
  async close(taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "status" = 'done', "next_poll_at" = NULL, "locked_until" = NULL, "updated_at" = now()
       WHERE "task_id" = $1 AND "status" = 'following'`,
      [taskId],
    );
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      let sleepMs = IDLE_MAX_MS;
      try {
        const rows = await this.claim();
        await Promise.all(rows.map((row) => this.poll(row)));
        const next = await this.nextDueMs();
        if (rows.length === ROUND_SIZE) sleepMs = 0;
        else if (next !== null) sleepMs = Math.min(IDLE_MAX_MS, Math.max(0, next));
      } catch (error) {
        this.logger.warn({ err: error }, 'could not poll upstream tasks');
      }
      if (sleepMs > 0 && !this.stopping) await this.delay.wait(sleepMs);
    }
  }

  private async claim(): Promise<FollowRow[]> {
    const result = (await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "locked_until" = now() + make_interval(secs => $2::double precision / 1000), "polls" = "polls" + 1
       WHERE "task_id" IN (
         SELECT "task_id" FROM "notifier"."upstream_tasks"
         WHERE "status" = 'following' AND "next_poll_at" <= now() AND ("locked_until" IS NULL OR "locked_until" < now())
         ORDER BY "next_poll_at" LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING "task_id", "recipient", "sender", "upstream_task_id", "upstream_context_id", "answer", "reported", "poll_interval_ms", "polls"`,
      [ROUND_SIZE, LEASE_MS],
    )) as [FollowRow[], number];
    return result[0];
  }

  private async nextDueMs(): Promise<number | null> {
    const rows = (await this.dataSource.query(
      `SELECT GREATEST(0, EXTRACT(EPOCH FROM (min("next_poll_at") - now())) * 1000)::float8 AS "ms" FROM "notifier"."upstream_tasks" WHERE "status" = 'following'`,
    )) as Array<{ ms: number | null }>;
    return rows[0]?.ms ?? null;
  }

  private async poll(row: FollowRow): Promise<void> {
    let task: Task;
    try {
      task = row.upstream_task_id === null ? taskOfMessage(row.answer as Message, row.task_id) : await this.getUpstreamTask(row);
    } catch (error) {
      await this.reschedule(row, row.reported, false, `GetTask: ${(error as Error).message}`.slice(0, 2000));
      return;
    }
    const { steps, next } = planReport(task, row.reported);
    let ended = isTerminalState(next.relay_state);
    try {
      for (const step of steps) {
        const made = await this.apply(row, step);
        if (made === 'task_ended') {
          ended = true;
          break;
        }
      }
    } catch (error) {
      // Not made: the same changes are planned again at the next poll.
      this.logger.warn({ err: error, task_id: row.task_id }, 'could not report the upstream task to the tasks service');
      await this.reschedule(row, row.reported, false, `report: ${(error as Error).message}`.slice(0, 2000));
      return;
    }
    if (ended) {
      await this.finish(row, next);
      return;
    }
    await this.reschedule(row, next, steps.length > 0, null);
  }

  private async getUpstreamTask(row: FollowRow): Promise<Task> {
    const agent = await this.directory.agent(row.recipient.handle);
    if (!agent?.upstream) throw new Error(`${row.recipient.handle} is no longer an upstream agent`);
    const credential = await this.credentials.get(row.recipient.handle);
    const fetchImpl = guardedFetch({
      allowPrivate: this.config.RELAY_WEBHOOK_ALLOW_PRIVATE,
      userAgent: 'AgentRelay-Notifier/1',
      timeoutMs: agent.webhook_timeout_ms ?? this.config.RELAY_WEBHOOK_TIMEOUT_MS,
    });
    const client = await upstreamClient(agent.upstream, fetchImpl, { ...credentialHeaders(credential), [RELAY_TASK_HEADER]: row.task_id });
    return client.getTask({ tenant: '', id: row.upstream_task_id as string, historyLength: undefined });
  }

  /** Makes one change; 'task_ended' when the relay task ended meanwhile (the sender canceled it). */
  private async apply(row: FollowRow, step: ReportStep): Promise<'made' | 'task_ended'> {
    try {
      if (step.kind === 'append') {
        await this.rpc.request(TASKS_SUBJECTS.send, {
          caller: row.recipient,
          task_id: row.task_id,
          message: step.message,
          ...(step.artifacts ? { artifacts: step.artifacts } : {}),
          history_length: 0,
        });
      } else {
        await this.rpc.request(TASKS_SUBJECTS.transition, {
          caller_id: row.recipient.id,
          task_id: row.task_id,
          transition: step.transition,
          ...(step.message ? { message: step.message } : {}),
          ...(step.artifacts ? { artifacts: step.artifacts } : {}),
          ...(step.reason ? { reason: step.reason } : {}),
          ...(step.result_summary ? { result_summary: step.result_summary } : {}),
          history_length: 0,
        });
      }
      return 'made';
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'thread_terminal') return 'task_ended';
      if (error instanceof RelayError && ALREADY_DONE.has(error.reason)) return 'made';
      throw error;
    }
  }

  private async reschedule(row: FollowRow, reported: ReportedProgress, changed: boolean, error: string | null): Promise<void> {
    const min = this.config.RELAY_UPSTREAM_POLL_MIN_MS;
    const interval = changed ? min : Math.min(this.config.RELAY_UPSTREAM_POLL_MAX_MS, Math.max(min, row.poll_interval_ms * 2));
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "reported" = $2, "poll_interval_ms" = $3::integer, "next_poll_at" = now() + make_interval(secs => $3::integer / 1000.0),
         "locked_until" = NULL, "last_error" = $4, "updated_at" = now() WHERE "task_id" = $1 AND "status" = 'following'`,
      [row.task_id, JSON.stringify(reported), interval, error],
    );
    if (error) this.logger.warn({ task_id: row.task_id, error, next_poll_in_ms: interval }, 'upstream task poll failed');
  }

  private async finish(row: FollowRow, reported: ReportedProgress): Promise<void> {
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "reported" = $2, "status" = 'done', "next_poll_at" = NULL, "locked_until" = NULL, "last_error" = NULL, "updated_at" = now()
       WHERE "task_id" = $1 AND "status" = 'following'`,
      [row.task_id, JSON.stringify(reported)],
    );
    this.logger.log({ task_id: row.task_id, state: reported.relay_state, polls: row.polls }, 'upstream task followed to its end');
  }
}
