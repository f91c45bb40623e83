import { randomBytes, randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type pg from 'pg';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { DEFAULT_CHAIN_LIMITS, RelayError, type ParticipantRefDto, type SendRequest, type StoredBytesRefusal, type TaskView } from '@app/contracts';
import { migrateServiceSchema, pgPoolOf } from '@app/database';
import { OrgQuotaMetrics } from '@app/metrics';
import { tasksDataSourceOptions } from '../../../apps/tasks/src/database/data-source';
import { SendIdempotency } from '../../../apps/tasks/src/tasks/use-cases/send-idempotency';
import { SendTask } from '../../../apps/tasks/src/tasks/use-cases/send-task';
import { RecentPairs } from '../../../apps/tasks/src/tasks/store/recent-pairs';
import { TaskRepository } from '../../../apps/tasks/src/tasks/store/task-repository';
import { TransitionTask } from '../../../apps/tasks/src/tasks/use-cases/transition-task';
import { CreatedForUpstream } from '../../../apps/tasks/src/tasks/upstream-reports/created-for-upstream';
import { ReportUpstream } from '../../../apps/tasks/src/tasks/upstream-reports/report-upstream';
import type { UpstreamRecipients } from '../../../apps/tasks/src/tasks/upstream-reports/upstream-recipients';
import type { CommittedEvents, OutboxRow } from '../../../apps/tasks/src/outbox/committed-events';
import type { StoredBytesQuotas } from '../../../apps/tasks/src/tasks/store/stored-bytes';

/**
 * What the write paths hand over to publish after each commit, kept in order. The medium tier has
 * no NATS: nothing is published, so every event stays in the outbox unpublished.
 */
export class HandedOverEvents implements CommittedEvents {
  readonly batches: OutboxRow[][] = [];

  publishCommitted(rows: OutboxRow[]): void {
    this.batches.push(rows);
  }

  /** The batches that carry an event of `taskId`. */
  ofTask(taskId: string): OutboxRow[][] {
    return this.batches.filter((rows) => rows.some((row) => row.task_id === taskId));
  }
}

/** The orgs' stored-bytes quotas as a test sets them, in place of the directory's. */
export class StoredBytesQuotasOfTest implements StoredBytesQuotas {
  readonly limits = new Map<string, number>();
  readonly refusals: string[] = [];

  limitOf(org: string): Promise<number | null> {
    return Promise.resolve(this.limits.get(org) ?? null);
  }

  refused(refusal: StoredBytesRefusal): RelayError {
    this.refusals.push(refusal.org);
    return new RelayError('org_quota_exceeded', `The org ${refusal.org} is at its quota of ${refusal.limit} stored bytes`, { ...refusal });
  }
}

/** The directory's answers on upstream agents as a test sets them: the handles in `agents` are upstream agents, known at once. */
export class UpstreamAgentsOfTest {
  readonly agents = new Set<string>();

  knownUpstream(_id: string, handle: string): boolean {
    return this.agents.has(handle);
  }

  isUpstream(id: string, handle: string): Promise<boolean> {
    return Promise.resolve(this.knownUpstream(id, handle));
  }
}

/** The tasks service's write paths on the medium tier's database: no HTTP, no NATS. */
export interface TasksDatabase {
  dataSource: DataSource;
  pool: pg.Pool;
  storedBytes: StoredBytesQuotasOfTest;
  upstreamAgents: UpstreamAgentsOfTest;
  createdForUpstream: CreatedForUpstream;
  sendTask: SendTask;
  transitionTask: TransitionTask;
  reportUpstream: ReportUpstream;
  handedOver: HandedOverEvents;
  close(): Promise<void>;
}

/** Opens the run's medium database (global setup created it) with the tasks schema migrated. */
export async function openTasksDatabase(): Promise<TasksDatabase> {
  const url = process.env.RELAY_MEDIUM_DATABASE_URL;
  if (!url) throw new Error('RELAY_MEDIUM_DATABASE_URL is not set: run the medium tests through jest (global setup creates it)');
  // The use cases' debug lines (a line per transition) say nothing a test checks.
  Logger.overrideLogger(['warn', 'error']);
  const dataSource = await new DataSource(tasksDataSourceOptions(url)).initialize();
  await migrateServiceSchema(dataSource);
  const repository = new TaskRepository();
  const handedOver = new HandedOverEvents();
  const storedBytes = new StoredBytesQuotasOfTest();
  const upstreamAgents = new UpstreamAgentsOfTest();
  const upstreams = upstreamAgents as unknown as UpstreamRecipients;
  const createdForUpstream = new CreatedForUpstream(upstreams);
  // Medium tests send many handoffs between one pair at once: the pair rate is the chain tests' subject, not theirs.
  const sendTask = new SendTask(
    dataSource,
    new SendIdempotency(repository),
    { ...DEFAULT_CHAIN_LIMITS, pairPerMinute: 1_000_000 },
    handedOver,
    new OrgQuotaMetrics(new Registry()),
    storedBytes,
    createdForUpstream,
    new RecentPairs(),
  );
  const transitionTask = new TransitionTask(dataSource, handedOver, storedBytes);
  return {
    dataSource,
    pool: pgPoolOf(dataSource),
    storedBytes,
    upstreamAgents,
    createdForUpstream,
    sendTask,
    transitionTask,
    reportUpstream: new ReportUpstream(dataSource, sendTask, transitionTask, upstreams, handedOver, storedBytes, createdForUpstream),
    handedOver,
    close: () => dataSource.destroy(),
  };
}

/** A participant no other test uses (the directory is not involved: the tasks service takes who it is told). */
export function participant(name: string): ParticipantRefDto {
  return { id: randomUUID(), handle: `${name}-${randomBytes(3).toString('hex')}@acme`, name, role: null };
}

export function textParts(text: string): SendRequest['message']['parts'] {
  return [{ kind: 'text', text }] as SendRequest['message']['parts'];
}

/** A new task from `sender` to `recipient` with one text message. */
export async function createTask(
  database: TasksDatabase,
  sender: ParticipantRefDto,
  recipient: ParticipantRefDto,
  extra: Partial<SendRequest> = {},
): Promise<TaskView> {
  const reply = await database.sendTask.send({ caller: sender, recipient, message: { parts: textParts('please look') }, ...extra } as SendRequest);
  return reply.task;
}

/** The rejection of `promise` (fails the test when it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<{ reason: string; data?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { reason: string; data?: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}

export async function rowsOf<T = Record<string, unknown>>(database: TasksDatabase, sql: string, values: unknown[]): Promise<T[]> {
  return (await database.pool.query(sql, values)).rows as T[];
}

/** The outbox events of a task, oldest first, as (type, payload). */
export async function outboxEventsOf(database: TasksDatabase, taskId: string): Promise<Array<{ type: string; payload: Record<string, unknown> }>> {
  return rowsOf(database, `SELECT "type", "payload" FROM "tasks"."outbox_events" WHERE "task_id" = $1 ORDER BY "position"`, [taskId]);
}
