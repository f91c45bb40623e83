import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type pg from 'pg';
import type { DataSource } from 'typeorm';
import type { Message, StreamResponse, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AError } from '@a2a-js/sdk/errors';
import { applyStreamEvent, isSettled, planReport, reportBoundsProblem, taskOfMessage, type ReportedProgress, type ReportStep } from '@app/a2a';
import {
  isTerminalState,
  PAYLOAD_LIMITS,
  RelayError,
  TASK_LIMITS,
  UPSTREAM_APPLY_MAX_STEPS,
  UPSTREAM_REPORT_SUBJECTS,
  type ParticipantRef,
  type UpstreamInterface,
  type UpstreamReportStep,
} from '@app/contracts';
import { HeldWrites, pgPoolOf } from '@app/database';
import { NatsRpcClient, WakeableDelay } from '@app/messaging';
import { NotifierConfig } from '../../notifier.config';
import { AgentTargetsService } from '../../targets/agent-targets.service';
import { callHeaders, UpstreamClientsService } from '../client/upstream-clients.service';
import { UpstreamCredentialsService } from '../identity/upstream-credentials.service';
import { AnswerTooLargeError, causeOf, DeadlineExceededError } from '../../outbound/guarded-fetch';

/** Polls of follow rows in flight at once in one process, at most. */
const ROUND_SIZE = 16;
/** How long a poll holds its row; a process that dies holding one loses it then. */
const LEASE_MS = 60_000;
/** The longest the follower sleeps when nothing wakes it (another replica's new rows are found then). */
const IDLE_MAX_MS = 1000;
/** The shortest sleep after a round that claimed nothing (a due row another replica is claiming right now). */
const IDLE_MIN_MS = 25;
/** How long a stream holds its row past its last renewal (renewed a third of it): a process killed mid-stream lets go this soon. */
export const STREAM_LEASE_MS = 15_000;
/** How long an ended follow waits to be written `done` with the others of that moment (far below either lease). */
const ENDED_WRITE_DELAY_MS = 200;
/** The most ended follows held for writing (see `HeldWrites`). */
const ENDED_MAX_HELD = 5000;

/** A follow ended in memory, to be written `done`. */
interface EndedFollow {
  taskId: string;
  reported: ReportedProgress;
  gaveUp: string | null;
}

export interface FollowStart {
  taskId: string;
  recipient: ParticipantRef;
  sender: string;
  upstreamTaskId: string | null;
  upstreamContextId: string | null;
  answer: Message | null;
  reported: ReportedProgress;
  /** The SHA-256 (hex) of the token the upstream's push notifications about this task carry; null: not followed by push. */
  pushTokenHash?: string | null;
}

/** A stream the delivery opened (`SendStreamingMessage`): its first event, read already, and the rest, which the follower reads. */
export interface AdoptedStream {
  first: StreamResponse;
  rest: AsyncGenerator<StreamResponse, void, undefined>;
  controller: AbortController;
}

/** What a `GetTask` made by the delivery answered: the task, or the error it failed with. */
export type PolledTask = { task: Task; error?: undefined } | { task?: undefined; error: unknown };

/**
 * A follow recorded in the statement that records the delivery's attempt: the INSERT with its
 * parameters numbered from `firstParameter`, and, once it ran, what comes of the row it inserted
 * (none: the task was followed already).
 */
export interface FollowWithAttempt {
  insert(firstParameter: number): { name: string; text: string; values: unknown[] };
  written(row: unknown): (() => Promise<void>) | null;
}

/** The delivery's answer, and the `GetTask` it made at once when the answer was not settled. */
export interface DeliveredAnswer {
  answer: Task;
  polled?: Promise<PolledTask>;
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
  push_token_hash: string | null;
  timed_out_polls: number;
}

/** Errors of a report step that refuse what it carries (its size or shape): made again, it is refused again. */
const REFUSED_CONTENT: ReadonlySet<string> = new Set(['invalid_params', 'payload_too_large', 'thread_message_limit']);

/** What a failed poll does to the count of polls in a row that timed out. */
type TimedOutCount = 'keep' | 'add' | 'reset';

/** The outcome of making the changes an upstream task shows: `unreportable` names why they never can be (the follow ends). */
interface ReportOutcome {
  next: ReportedProgress;
  changed: boolean;
  ended: boolean;
  error: string | null;
  unreportable: string | null;
}

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
  /** The polls in flight. */
  private readonly polling = new Set<Promise<void>>();
  /** The streams this process reads, by relay task id. */
  private readonly streams = new Map<string, { controller: AbortController; done: Promise<void> }>();
  /**
   * Follows ended here, written `done` together a moment later. A process killed meanwhile leaves
   * them `following` and held: once the hold ends, a poll finds the upstream task ended and reports
   * it again, which changes nothing (the report's steps are made already), and ends the follow.
   */
  private readonly ended = new HeldWrites<EndedFollow>((follows) => this.writeEnded(follows), {
    delayMs: ENDED_WRITE_DELAY_MS,
    maxHeld: ENDED_MAX_HELD,
    onWriteFailed: (error, follows) =>
      this.logger.warn({ err: error, follows, dropped_so_far: this.ended.dropped }, 'could not mark ended upstream follows; writing them again shortly'),
  });

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(AgentTargetsService) private readonly targets: AgentTargetsService,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
    @Inject(UpstreamClientsService) private readonly clients: UpstreamClientsService,
  ) {}

  onApplicationBootstrap(): void {
    this.loop = this.run();
  }

  /** The data source's own pool, for the statements of every follow (each prepared once per connection). */
  private get pool(): pg.Pool {
    return pgPoolOf(this.dataSource);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.delay.interrupt();
    await this.loop;
    for (const stream of this.streams.values()) stream.controller.abort();
    await Promise.all([...this.streams.values()].map((stream) => stream.done));
    await this.ended.close().catch(() => undefined);
  }

  /**
   * A delivered task to record beside its upstream task (once: a repeated delivery adds nothing),
   * held by this process, in the statement that records the delivery's attempt (`insert`). Once
   * that statement ran (`written`, with the row it inserted): given the stream the delivery opened,
   * it reads that stream from here on; given the delivery's answer (`answered`), it returns what
   * looks at it first: an answer already ended or waiting for input is reported as it is, another
   * is polled at once. A process killed meanwhile lets go of the row within STREAM_LEASE_MS, and
   * the next poll reports what the upstream shows then.
   */
  followWithAttempt(start: FollowStart, stream?: AdoptedStream, delivered?: DeliveredAnswer): FollowWithAttempt {
    const answered = delivered?.answer;
    const polledNow = answered !== undefined && !isSettled(answered);
    const insert = (firstParameter: number): { name: string; text: string; values: unknown[] } => {
      const at = (n: number): string => `$${firstParameter + n - 1}`;
      return {
        name: 'notifier-follow-upstream-task',
        text: `INSERT INTO "notifier"."upstream_tasks"
         ("task_id", "recipient", "sender", "upstream_task_id", "upstream_context_id", "answer", "status", "reported", "next_poll_at", "poll_interval_ms", "locked_until",
          "push_token_hash", "polls")
       VALUES (${at(1)}, ${at(2)}::jsonb, ${at(3)}, ${at(4)}, ${at(5)}, ${at(6)}::jsonb, 'following', ${at(7)}::jsonb,
         -- Held for the delivery's first look as a claim holds a row: due when the hold ends, unless nudged meanwhile.
         CASE WHEN ${at(13)}::boolean THEN now() + make_interval(secs => ${at(10)}::integer / 1000.0) ELSE now() END,
         ${at(8)}::integer, CASE WHEN ${at(9)}::boolean THEN now() + make_interval(secs => ${at(10)}::integer / 1000.0) END, ${at(11)},
         CASE WHEN ${at(12)}::boolean THEN 1 ELSE 0 END)
       ON CONFLICT ("task_id") DO NOTHING
       RETURNING "task_id", "recipient", "sender", "upstream_task_id", "upstream_context_id", "answer", "reported", "poll_interval_ms", "polls", "push_token_hash", "timed_out_polls"`,
        values: [
          start.taskId,
          JSON.stringify(start.recipient),
          start.sender,
          start.upstreamTaskId,
          start.upstreamContextId,
          start.answer ? JSON.stringify(start.answer) : null,
          JSON.stringify(start.reported),
          this.config.RELAY_UPSTREAM_POLL_MIN_MS,
          stream !== undefined || answered !== undefined,
          STREAM_LEASE_MS,
          start.pushTokenHash ?? null,
          polledNow,
          answered !== undefined,
        ],
      };
    };
    const written = (inserted: unknown): (() => Promise<void>) | null => {
      const row = inserted as FollowRow | undefined;
      if (stream && row && !this.stopping)
        this.read(
          row,
          (async function* () {
            yield stream.first;
            yield* stream.rest;
          })(),
          stream.controller,
          // Held by the insert for STREAM_LEASE_MS already.
          false,
        );
      else stream?.controller.abort();
      if (!row || this.stopping || !answered) {
        if (!stream) this.delay.wake();
        return null;
      }
      return () => this.firstLook(row, answered, delivered?.polled);
    };
    return { insert, written };
  }

  private async firstLook(row: FollowRow, answered: Task, polled: Promise<PolledTask> | undefined): Promise<void> {
    try {
      if (isSettled(answered)) await this.report(row, answered, row.reported);
      else if (polled) {
        const { task, error } = await polled;
        if (task) await this.report(row, task, row.reported);
        else await this.pollFailed(row, row.reported, error);
      } else await this.poll(row);
    } catch (error) {
      this.logger.warn({ err: error, task_id: row.task_id }, 'could not look at the upstream answer at once');
    }
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

  /**
   * A push notification from the upstream about a task it was delivered: it must carry the token
   * the relay gave that task (compared by hash, in constant time); the task is then polled at once
   * (the notification is a reason to look, `GetTask` says what changed). Anything else is refused
   * alike, so a caller learns nothing about which tasks exist.
   */
  async pushed(taskId: string, token: string): Promise<void> {
    const rows = (await this.dataSource.query(`SELECT "push_token_hash" FROM "notifier"."upstream_tasks" WHERE "task_id" = $1`, [taskId])) as Array<{
      push_token_hash: string | null;
    }>;
    const expected = rows[0]?.push_token_hash;
    const given = createHash('sha256').update(token).digest();
    if (!expected || !timingSafeEqual(Buffer.from(expected, 'hex'), given)) {
      throw new RelayError('unauthenticated', 'Unknown task or wrong push notification token');
    }
    await this.nudge(taskId);
  }

  /** The relay task ended on the sender's side (canceled, and the cancel went upstream): nothing more to follow. */
  async close(taskId: string): Promise<void> {
    this.streams.get(taskId)?.controller.abort();
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "status" = 'done', "next_poll_at" = NULL, "locked_until" = NULL, "updated_at" = now()
       WHERE "task_id" = $1 AND "status" = 'following'`,
      [taskId],
    );
  }

  /**
   * Claims due rows while fewer than ROUND_SIZE polls are in flight, and starts each poll on its
   * own: a row that becomes due while others are polled (a new follow, a nudge) is taken as soon as
   * it is, not after the slowest poll in flight. A poll that ends wakes the loop.
   */
  private async run(): Promise<void> {
    while (!this.stopping) {
      let sleepMs = IDLE_MAX_MS;
      try {
        const free = ROUND_SIZE - this.polling.size;
        if (free > 0) {
          const rows = await this.claim(free);
          for (const row of rows) this.startPoll(row);
          // Every slot taken: a poll that ends wakes the loop. Otherwise: until the next row is due.
          if (rows.length < free) {
            const next = await this.nextDueMs();
            if (next !== null) sleepMs = Math.min(IDLE_MAX_MS, Math.max(rows.length === 0 ? IDLE_MIN_MS : 0, next));
          }
        }
      } catch (error) {
        this.logger.warn({ err: error }, 'could not poll upstream tasks');
      }
      if (sleepMs > 0 && !this.stopping) await this.delay.wait(sleepMs);
    }
    await Promise.allSettled([...this.polling]);
  }

  private startPoll(row: FollowRow): void {
    const polled: Promise<void> = this.poll(row)
      .catch((error: unknown) => this.logger.warn({ err: error, task_id: row.task_id }, 'could not poll upstream tasks'))
      .finally(() => {
        this.polling.delete(polled);
        this.delay.wake();
      });
    this.polling.add(polled);
  }

  private async claim(limit: number): Promise<FollowRow[]> {
    const { rows } = await this.pool.query<FollowRow>({
      name: 'notifier-claim-upstream-tasks',
      // The row is due again when the lease ends (a process that dies holding it lets go then); a
      // nudge while it is held moves that before the lease's end, which its reschedule keeps.
      text: `UPDATE "notifier"."upstream_tasks" SET "locked_until" = now() + make_interval(secs => $2::integer / 1000.0), "next_poll_at" = now() + make_interval(secs => $2::integer / 1000.0),
         "polls" = "polls" + 1
       WHERE "task_id" IN (
         SELECT "task_id" FROM "notifier"."upstream_tasks"
         WHERE "status" = 'following' AND "next_poll_at" <= now() AND ("locked_until" IS NULL OR "locked_until" < now())
         ORDER BY "next_poll_at" LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING "task_id", "recipient", "sender", "upstream_task_id", "upstream_context_id", "answer", "reported", "poll_interval_ms", "polls", "push_token_hash", "timed_out_polls"`,
      values: [limit, LEASE_MS],
    });
    return rows;
  }

  /**
   * How soon the next row can be claimed: its next poll, or the end of the lease another process
   * holds it by (null: nothing is followed).
   */
  async nextDueMs(): Promise<number | null> {
    const { rows } = await this.pool.query<{ ms: string | number | null }>({
      name: 'notifier-next-upstream-poll',
      text: `SELECT EXTRACT(EPOCH FROM (min(GREATEST("next_poll_at", "locked_until")) - now())) * 1000 AS "ms"
       FROM "notifier"."upstream_tasks" WHERE "status" = 'following' AND "next_poll_at" IS NOT NULL`,
    });
    const ms = rows[0]?.ms;
    return ms === null || ms === undefined ? null : Math.max(0, Number(ms));
  }

  private async poll(row: FollowRow): Promise<void> {
    let task: Task;
    try {
      if (row.upstream_task_id === null) task = taskOfMessage(row.answer as Message, row.task_id);
      else {
        const { client, upstream } = await this.clientFor(row);
        const serviceParameters = callHeaders(row.task_id);
        if (upstream.streaming && !this.streams.has(row.task_id)) {
          // Resumes the stream (`SubscribeToTask`: the whole task, then what happens to it).
          const controller = new AbortController();
          this.read(row, client.resubscribeTask({ tenant: '', id: row.upstream_task_id }, { signal: controller.signal, serviceParameters }), controller);
          return;
        }
        task = await client.getTask({ tenant: '', id: row.upstream_task_id, historyLength: undefined }, { serviceParameters });
      }
    } catch (error) {
      await this.pollFailed(row, row.reported, error);
      return;
    }
    await this.report(row, task, row.reported);
  }

  /**
   * A `GetTask` without a (whole) answer: tried again later, unless the answer can never be read
   * (larger than RELAY_UPSTREAM_MAX_ANSWER_BYTES) or did not come whole within the deadline
   * RELAY_UPSTREAM_MAX_TIMED_OUT_POLLS times in a row: then the relay task fails, saying why.
   */
  private async pollFailed(row: FollowRow, reported: ReportedProgress, error: unknown): Promise<void> {
    this.forgetRefusedToken(row, error);
    const tooLarge = causeOf(error, AnswerTooLargeError);
    if (tooLarge) {
      await this.giveUp(row, reported, `The upstream agent's answer to GetTask is larger than the relay reads (${tooLarge.limitBytes} bytes).`);
      return;
    }
    const late = causeOf(error, DeadlineExceededError);
    const timedOut = row.timed_out_polls + 1;
    if (late && timedOut >= this.config.RELAY_UPSTREAM_MAX_TIMED_OUT_POLLS) {
      await this.giveUp(row, reported, `The upstream agent did not answer GetTask whole within ${late.timeoutMs} ms, ${timedOut} times in a row.`);
      return;
    }
    await this.reschedule(row, reported, false, `GetTask: ${(error as Error).message}`.slice(0, 2000), late ? 'add' : 'keep');
  }

  /**
   * Ends the follow of an upstream task whose answers the relay cannot report: the relay task
   * fails (accepted first, if it was still pending: the upstream took it) with `reason` as its
   * reason and its last message, so the sender, the timeline and the audit log say why; the
   * upstream is not asked again. If the tasks service cannot be told now, the next poll tries again.
   */
  private async giveUp(row: FollowRow, reported: ReportedProgress, reason: string): Promise<void> {
    const text = `The relay stopped following this task: ${reason}`.slice(0, TASK_LIMITS.reasonChars);
    try {
      const steps: ReportStep[] = reported.relay_state === 'pending' ? [{ kind: 'transition', transition: 'accept' }] : [];
      if (!isTerminalState(reported.relay_state))
        steps.push({
          kind: 'transition',
          transition: 'fail',
          reason: text,
          message: { message_id: `agentrelay-unreportable-${row.task_id}`, parts: [{ kind: 'text', text }] },
        });
      if (steps.length > 0) await this.apply(row, steps);
    } catch (error) {
      this.logger.warn({ err: error, task_id: row.task_id }, 'could not fail the relay task of an unreportable upstream task');
      await this.reschedule(row, reported, false, `${reason} (${(error as Error).message})`.slice(0, 2000), 'keep');
      return;
    }
    const ended: ReportedProgress = isTerminalState(reported.relay_state) ? reported : { ...reported, relay_state: 'failed' };
    this.finish(row, ended, reason);
  }

  /** Makes what the upstream task shows into the relay task's changes, then schedules the next poll or ends the follow. */
  private async report(row: FollowRow, task: Task, reported: ReportedProgress): Promise<void> {
    const outcome = await this.reportSteps(row, task, reported);
    if (outcome.unreportable !== null) {
      await this.giveUp(row, reported, outcome.unreportable);
      return;
    }
    if (outcome.error !== null) {
      await this.reschedule(row, reported, false, `report: ${outcome.error}`.slice(0, 2000), 'reset');
      return;
    }
    if (outcome.ended) {
      this.finish(row, outcome.next);
      return;
    }
    await this.reschedule(row, outcome.next, outcome.changed, null, 'reset');
  }

  /**
   * The changes planned from the task, made in order; `error` when one could not be made (planned
   * again next time); `unreportable` when they are out of the relay's bounds or the tasks service
   * refuses what they carry (nothing is made, or made again).
   */
  private async reportSteps(row: FollowRow, task: Task, reported: ReportedProgress): Promise<ReportOutcome> {
    const { steps, next } = planReport(task, reported);
    const problem = reportBoundsProblem(steps, this.rpc.maxPayloadBytes);
    if (problem !== undefined) {
      return {
        next: reported,
        changed: false,
        ended: false,
        error: null,
        unreportable: `The upstream agent's answer is out of the relay's bounds: ${problem}.`,
      };
    }
    let ended = isTerminalState(next.relay_state);
    try {
      if (steps.length > 0 && (await this.apply(row, steps)) === 'task_ended') ended = true;
    } catch (error) {
      if (error instanceof RelayError && REFUSED_CONTENT.has(error.reason)) {
        return { next: reported, changed: false, ended: false, error: null, unreportable: `The relay refused the upstream agent's answer: ${error.message}` };
      }
      // Not made: the same changes are planned again at the next poll.
      this.logger.warn({ err: error, task_id: row.task_id }, 'could not report the upstream task to the tasks service');
      return { next: reported, changed: false, ended: false, error: (error as Error).message, unreportable: null };
    }
    return { next, changed: steps.length > 0, ended, error: null, unreportable: null };
  }

  /**
   * Reads a stream of the upstream task (the one `SendStreamingMessage` opened, or
   * `SubscribeToTask`) in the background, holding the row: each event is reported as it comes and
   * what was reported saved with the row. When the stream ends before the task, or drops, the row
   * is scheduled again and the next round subscribes again; a server that refuses to subscribe
   * (the task ended meanwhile, no streaming) is asked with `GetTask` instead.
   */
  private read(row: FollowRow, events: AsyncGenerator<StreamResponse, void, undefined>, controller: AbortController, renewFirst = true): void {
    const renew = setInterval(() => void this.renew(row.task_id).catch(() => undefined), STREAM_LEASE_MS / 3);
    const done = this.readStream(row, events, controller, renewFirst)
      .catch((error: unknown) => this.logger.warn({ err: error, task_id: row.task_id }, 'could not follow the upstream stream'))
      .finally(() => {
        clearInterval(renew);
        controller.abort();
        this.streams.delete(row.task_id);
      });
    this.streams.set(row.task_id, { controller, done });
  }

  private async readStream(
    row: FollowRow,
    events: AsyncGenerator<StreamResponse, void, undefined>,
    controller: AbortController,
    renewFirst: boolean,
  ): Promise<void> {
    if (renewFirst) await this.renew(row.task_id).catch(() => undefined);
    let snapshot: Task | null = null;
    let reported = row.reported;
    let changed = false;
    // A stream quiet for this long is closed and subscribed to again (a connection that died without
    // a word would otherwise hold the row for ever; the new stream's first event is the whole task).
    const idleMs = this.config.RELAY_UPSTREAM_STREAM_IDLE_MS;
    let idle = setTimeout(() => controller.abort(), idleMs);
    try {
      // The events come in as they came (as many as had arrived by the time the last ones were reported): reported together.
      for await (const arrived of inArrivals(events)) {
        clearTimeout(idle);
        idle = setTimeout(() => controller.abort(), idleMs);
        for (const event of arrived) snapshot = applyStreamEvent(snapshot, event, row.task_id);
        if (!snapshot) continue;
        const outcome = await this.reportSteps(row, snapshot, reported);
        if (outcome.unreportable !== null) {
          await this.giveUp(row, reported, outcome.unreportable);
          return;
        }
        if (outcome.error !== null) {
          await this.reschedule(row, reported, false, `report: ${outcome.error}`.slice(0, 2000), 'keep');
          return;
        }
        if (outcome.ended) {
          this.finish(row, outcome.next);
          return;
        }
        if (outcome.changed) {
          reported = outcome.next;
          changed = true;
          await this.saveReported(row.task_id, reported);
        }
      }
      // The stream ended before the task did (it waits for input, or the server closed it).
      await this.reschedule(row, reported, changed, null, 'reset');
    } catch (error) {
      if (controller.signal.aborted) {
        // Quiet too long, this process stops, or the sender canceled: another round, here or elsewhere, subscribes again.
        await this.release(row.task_id, reported).catch(() => undefined);
        return;
      }
      if (snapshot === null && error instanceof A2AError && error.reason !== 'INTERNAL_ERROR') {
        await this.pollNow(row, reported);
        return;
      }
      this.forgetRefusedToken(row, error);
      const tooLarge = causeOf(error, AnswerTooLargeError);
      if (tooLarge) {
        await this.giveUp(row, reported, `An event of the upstream agent's stream is larger than the relay reads (${tooLarge.limitBytes} bytes).`);
        return;
      }
      await this.reschedule(row, reported, changed, `stream: ${(error as Error)?.message ?? String(error)}`.slice(0, 2000), 'keep');
    } finally {
      clearTimeout(idle);
    }
  }

  /** A `GetTask` in place of a stream the server would not open. */
  private async pollNow(row: FollowRow, reported: ReportedProgress): Promise<void> {
    let task: Task;
    try {
      const { client } = await this.clientFor(row);
      task = await client.getTask(
        { tenant: '', id: row.upstream_task_id as string, historyLength: undefined },
        { serviceParameters: callHeaders(row.task_id) },
      );
    } catch (error) {
      await this.pollFailed(row, reported, error);
      return;
    }
    await this.report(row, task, reported);
  }

  private async clientFor(row: FollowRow): Promise<{ client: Client; upstream: UpstreamInterface }> {
    const agent = await this.targets.agent(row.recipient.handle);
    const upstream = agent?.target.upstream;
    if (!agent || !upstream) throw new Error(`${row.recipient.handle} is no longer an upstream agent`);
    const timeoutMs = agent.target.webhook_timeout_ms ?? this.config.RELAY_WEBHOOK_TIMEOUT_MS;
    return { client: await this.clients.clientFor(row.recipient.handle, upstream, timeoutMs), upstream };
  }

  /** An upstream that answered 401 refused the token: the next request gets a new one (an OAuth2 client's). */
  private forgetRefusedToken(row: FollowRow, error: unknown): void {
    if (/\b401\b/.test((error as Error)?.message ?? '')) this.credentials.forget(row.recipient.handle);
  }

  /** Keeps holding a row this process streams. */
  private async renew(taskId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "locked_until" = now() + make_interval(secs => $2::integer / 1000.0) WHERE "task_id" = $1 AND "status" = 'following'`,
      [taskId, STREAM_LEASE_MS],
    );
  }

  private async saveReported(taskId: string, reported: ReportedProgress): Promise<void> {
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "reported" = $2, "updated_at" = now() WHERE "task_id" = $1 AND "status" = 'following'`,
      [taskId, JSON.stringify(reported)],
    );
  }

  /** Lets go of a row (at once due again), keeping what was reported. */
  private async release(taskId: string, reported: ReportedProgress): Promise<void> {
    await this.dataSource.query(
      `UPDATE "notifier"."upstream_tasks" SET "reported" = $2, "locked_until" = NULL, "next_poll_at" = now(), "updated_at" = now() WHERE "task_id" = $1 AND "status" = 'following'`,
      [taskId, JSON.stringify(reported)],
    );
  }

  /**
   * Makes the changes, in order: in one request and one transaction of the tasks service, or (a
   * batch larger than one NATS message carries) in as few as they fit in, each in its own.
   * 'task_ended' when the relay task ended meanwhile (the sender canceled it): the rest is not made.
   */
  private async apply(row: FollowRow, steps: readonly ReportStep[]): Promise<'made' | 'task_ended'> {
    for (const batch of batchesOf(steps, this.rpc.maxPayloadBytes - PAYLOAD_LIMITS.internalEnvelopeBytes)) {
      const reply = await this.rpc.request(UPSTREAM_REPORT_SUBJECTS.apply, { task_id: row.task_id, steps: batch.map(stepRequest) });
      if (reply.ended) return 'task_ended';
    }
    return 'made';
  }

  private async reschedule(row: FollowRow, reported: ReportedProgress, changed: boolean, error: string | null, timedOut: TimedOutCount): Promise<void> {
    const min = this.config.RELAY_UPSTREAM_POLL_MIN_MS;
    // Followed by push: the upstream says when it changes; the poll is a safety net (a failed one backs off as usual).
    const interval =
      row.push_token_hash !== null && error === null
        ? this.config.RELAY_UPSTREAM_PUSH_POLL_MS
        : changed
          ? min
          : Math.min(this.config.RELAY_UPSTREAM_POLL_MAX_MS, Math.max(min, row.poll_interval_ms * 2));
    await this.pool.query({
      name: 'notifier-reschedule-upstream-task',
      text: `UPDATE "notifier"."upstream_tasks" SET "reported" = $2, "poll_interval_ms" = $3::integer,
         "next_poll_at" = CASE WHEN "locked_until" IS NOT NULL AND "next_poll_at" < "locked_until" THEN now() ELSE now() + make_interval(secs => $3::integer / 1000.0) END,
         "locked_until" = NULL, "last_error" = $4,
         "timed_out_polls" = CASE $5::text WHEN 'add' THEN "timed_out_polls" + 1 WHEN 'reset' THEN 0 ELSE "timed_out_polls" END, "updated_at" = now()
       WHERE "task_id" = $1 AND "status" = 'following'`,
      values: [row.task_id, JSON.stringify(reported), interval, error, timedOut],
    });
    if (error) this.logger.warn({ task_id: row.task_id, error, next_poll_in_ms: interval }, 'upstream task poll failed');
  }

  /**
   * Ends the follow: the upstream task ended, or (`gaveUp`, the reason) its answers cannot be
   * reported; the answer kept with the row goes. Written with the others ended at that moment.
   */
  private finish(row: FollowRow, reported: ReportedProgress, gaveUp: string | null = null): void {
    this.ended.add({ taskId: row.task_id, reported, gaveUp });
    if (gaveUp) this.logger.warn({ task_id: row.task_id, polls: row.polls, reason: gaveUp }, 'upstream task no longer followed: its answer cannot be reported');
    else this.logger.log({ task_id: row.task_id, state: reported.relay_state, polls: row.polls }, 'upstream task followed to its end');
  }

  private async writeEnded(follows: EndedFollow[]): Promise<void> {
    await this.pool.query({
      name: 'notifier-finish-upstream-tasks',
      text: `UPDATE "notifier"."upstream_tasks" t SET "reported" = e."reported"::jsonb, "status" = 'done', "next_poll_at" = NULL, "locked_until" = NULL,
         "last_error" = e."gave_up", "answer" = CASE WHEN e."gave_up" IS NULL THEN t."answer" END, "updated_at" = now()
       FROM unnest($1::text[], $2::text[], $3::text[]) AS e("task_id", "reported", "gave_up")
       WHERE t."task_id" = e."task_id" AND t."status" = 'following'`,
      values: [follows.map((follow) => follow.taskId), follows.map((follow) => JSON.stringify(follow.reported)), follows.map((follow) => follow.gaveUp)],
    });
  }
}

/**
 * The events of a stream in arrivals: each one the next event and every other that has come by
 * then (none is waited for past what is already there). Closing it closes the stream.
 */
async function* inArrivals<T>(events: AsyncGenerator<T, void, undefined>): AsyncGenerator<T[], void, undefined> {
  const notYet = Symbol('not yet');
  let next = events.next();
  try {
    for (;;) {
      const first = await next;
      if (first.done) return;
      const arrived = [first.value];
      for (;;) {
        next = events.next();
        const ready = await Promise.race([next, new Promise<typeof notYet>((resolve) => setImmediate(() => resolve(notYet)))]);
        if (ready === notYet) break;
        if (ready.done) {
          yield arrived;
          return;
        }
        arrived.push(ready.value);
      }
      yield arrived;
    }
  } finally {
    void events.return(undefined).catch(() => undefined);
  }
}

/** A planned change as the tasks service's `apply` takes it. */
function stepRequest(step: ReportStep): UpstreamReportStep {
  if (step.kind === 'append') return { kind: 'append', message: step.message, ...(step.artifacts ? { artifacts: step.artifacts } : {}) };
  return {
    kind: 'transition',
    transition: step.transition,
    ...(step.message ? { message: step.message } : {}),
    ...(step.artifacts ? { artifacts: step.artifacts } : {}),
    ...(step.reason ? { reason: step.reason } : {}),
    ...(step.result_summary ? { result_summary: step.result_summary } : {}),
  };
}

/** The changes in order, in batches of at most UPSTREAM_APPLY_MAX_STEPS whose JSON stays within `maxBytes` (a larger change alone). */
function batchesOf(steps: readonly ReportStep[], maxBytes: number): ReportStep[][] {
  const batches: ReportStep[][] = [];
  let batch: ReportStep[] = [];
  let bytes = 0;
  for (const step of steps) {
    const size = Buffer.byteLength(JSON.stringify(stepRequest(step))) + 1;
    if (batch.length > 0 && (bytes + size > maxBytes || batch.length >= UPSTREAM_APPLY_MAX_STEPS)) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(step);
    bytes += size;
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}
