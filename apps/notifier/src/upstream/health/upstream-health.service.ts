import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type { UpstreamCallMethod, UpstreamCallView } from '@app/contracts';
import { NotifierConfig, upstreamPrivateTargets } from '../../notifier.config';
import { guardedFetch } from '../../outbound/guarded-fetch';
import { observedFetch, type ObservedCall } from './upstream-calls';
import { UpstreamCallLog } from './upstream-call-log';
import { UpstreamMetrics, type UpstreamBreakerState } from './upstream-metrics';

/** The calls of one task the admin API shows at most (the newest). */
const CALLS_SHOWN = 500;
/** A success is written at most this often per agent and process (polls answer many times a second). */
const SUCCESS_WRITE_MS = 1000;

/**
 * The health of each upstream agent: every request the relay makes to its server (card, A2A
 * methods, token) is timed and counted in the metrics, its last success and last failure kept per
 * agent, and each request about a relay task kept for that task's timeline (written together, a
 * moment later: `UpstreamCallLog`). Also makes the one
 * `fetch` every request to an upstream goes through: the SSRF guard, the agent's mTLS identity,
 * and this record.
 */
@Injectable()
export class UpstreamHealthService implements OnApplicationShutdown {
  private readonly logger = new Logger(UpstreamHealthService.name);
  private breakerOf: (url: string) => UpstreamBreakerState = () => 'closed';
  private readonly successWrittenAt = new Map<string, number>();
  private readonly callLog: UpstreamCallLog;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(UpstreamMetrics) private readonly metrics: UpstreamMetrics,
  ) {
    metrics.watch(() => this.gaugeRows());
    this.callLog = new UpstreamCallLog(dataSource, (error, calls) =>
      this.logger.warn({ err: error, calls, dropped_so_far: this.callLog.droppedCalls }, 'could not record upstream calls; writing them again shortly'),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.callLog.close().catch(() => undefined);
  }

  /** The delivery worker's circuit breakers (per host and port, in this process): the state of the one a URL goes through. */
  watchBreakers(stateOf: (url: string) => UpstreamBreakerState): void {
    this.breakerOf = stateOf;
  }

  breakerFor(url: string): UpstreamBreakerState {
    try {
      return this.breakerOf(url);
    } catch {
      return 'closed';
    }
  }

  /**
   * The `fetch` for requests to this agent's server: SSRF-guarded, each exchange within `timeoutMs`
   * (headers and body) and its answers to `maxAnswerBytes` (RELAY_UPSTREAM_MAX_ANSWER_BYTES unless given), with the mTLS identity `tls` (null: none), recorded.
   */
  fetchFor(
    handle: string,
    timeoutMs: number,
    options: { method?: UpstreamCallMethod; tls: Parameters<typeof guardedFetch>[0]['tls']; maxAnswerBytes?: number; keepAlive?: boolean },
  ): typeof fetch {
    const tls = options.tls;
    const inner = guardedFetch({
      allowPrivate: upstreamPrivateTargets(this.config),
      userAgent: 'AgentRelay-Notifier/1',
      timeoutMs,
      maxAnswerBytes: options.maxAnswerBytes ?? this.config.RELAY_UPSTREAM_MAX_ANSWER_BYTES,
      tls,
      keepAlive: options.keepAlive,
    });
    return observedFetch(inner, (call) => this.observe(handle, call), options.method);
  }

  observe(handle: string, call: ObservedCall): void {
    this.metrics.call(handle, call.method, call.outcome, call.durationMs / 1000);
    if (call.outcome !== 'ok')
      this.logger.warn({ handle, method: call.method, outcome: call.outcome, status: call.statusCode, error: call.error }, 'upstream call failed');
    if (call.taskId) this.callLog.add(handle, { ...call, taskId: call.taskId });
    void this.recordAgentHealth(handle, call).catch((error: unknown) => this.logger.debug({ err: error, handle }, 'could not record an upstream call'));
  }

  private async recordAgentHealth(handle: string, call: ObservedCall): Promise<void> {
    const now = Date.now();
    const sinceSuccessWrite = now - (this.successWrittenAt.get(handle) ?? 0);
    if (call.outcome === 'ok' && sinceSuccessWrite >= SUCCESS_WRITE_MS) {
      this.successWrittenAt.set(handle, now);
      await this.dataSource.query(
        `INSERT INTO "notifier"."upstream_agents" ("handle", "last_success_at") VALUES ($1, $2)
         ON CONFLICT ("handle") DO UPDATE SET "last_success_at" = GREATEST("upstream_agents"."last_success_at", EXCLUDED."last_success_at")`,
        [handle, call.at],
      );
    } else if (call.outcome !== 'ok') {
      // The next success is written whenever it comes: the health never shows a failure after a later success.
      this.successWrittenAt.delete(handle);
      await this.dataSource.query(
        `INSERT INTO "notifier"."upstream_agents" ("handle", "last_failure_at", "last_failure_method", "last_failure_reason") VALUES ($1, $2, $3, $4)
         ON CONFLICT ("handle") DO UPDATE SET "last_failure_at" = EXCLUDED."last_failure_at", "last_failure_method" = EXCLUDED."last_failure_method",
           "last_failure_reason" = EXCLUDED."last_failure_reason"
         WHERE "upstream_agents"."last_failure_at" IS NULL OR "upstream_agents"."last_failure_at" <= EXCLUDED."last_failure_at"`,
        [handle, call.at, call.method, `${call.outcome}: ${call.error ?? ''}`.slice(0, 1000)],
      );
    }
  }

  /** The calls made for one relay task, oldest first (the newest CALLS_SHOWN). */
  async calls(taskId: string): Promise<UpstreamCallView[]> {
    await this.callLog.write();
    const rows = (await this.dataSource.query(
      `SELECT * FROM (SELECT "id", "at", "handle", "method", "outcome", "status_code", "duration_ms", "error" FROM "notifier"."upstream_calls"
         WHERE "task_id" = $1 ORDER BY "id" DESC LIMIT $2) AS "newest" ORDER BY "id"`,
      [taskId, CALLS_SHOWN],
    )) as Array<Omit<UpstreamCallView, 'at'> & { at: Date }>;
    return rows.map((row) => ({
      at: new Date(row.at).toISOString(),
      handle: row.handle,
      method: row.method,
      outcome: row.outcome,
      status_code: row.status_code,
      duration_ms: row.duration_ms,
      error: row.error,
    }));
  }

  /** Removes the calls recorded longer ago than the delivery log keeps deliveries. */
  async purgeOlderThan(days: number): Promise<number> {
    const result = (await this.dataSource.query(`DELETE FROM "notifier"."upstream_calls" WHERE "at" < now() - make_interval(days => $1)`, [days])) as [
      unknown,
      number,
    ];
    return result[1] ?? 0;
  }

  private async gaugeRows(): Promise<Array<{ agent: string; breaker: UpstreamBreakerState; pending: boolean }>> {
    const rows = (await this.dataSource.query(
      `SELECT "t"."handle", "t"."upstream"->>'url' AS "url", "u"."pending" IS NOT NULL AS "pending"
       FROM "notifier"."agent_targets" "t" LEFT JOIN "notifier"."upstream_agents" "u" ON "u"."handle" = "t"."handle"
       WHERE "t"."upstream" IS NOT NULL AND NOT "t"."disabled"`,
    )) as Array<{ handle: string; url: string; pending: boolean }>;
    return rows.map((row) => ({ agent: row.handle, breaker: this.breakerFor(row.url), pending: row.pending }));
  }
}
