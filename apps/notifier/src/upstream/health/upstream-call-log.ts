import type { DataSource } from 'typeorm';
import { HeldWrites } from '@app/database';
import type { ObservedCall } from './upstream-calls';

/** How long a call waits to be written with the others of that moment, in one INSERT. */
export const CALL_LOG_WRITE_DELAY_MS = 200;
/** The most calls held for writing: more are written at once, and while a write fails the oldest beyond this are dropped. */
export const CALL_LOG_MAX_HELD = 5000;

interface HeldCall {
  handle: string;
  call: ObservedCall & { taskId: string };
}

/**
 * The calls made to upstream servers about relay tasks, written to `upstream_calls` together: every
 * CALL_LOG_WRITE_DELAY_MS one INSERT of whatever came meanwhile (in the order they ended), not one
 * statement per call. A read of a task's calls writes what is held first, so it misses none.
 */
export class UpstreamCallLog {
  private readonly calls: HeldWrites<HeldCall>;

  constructor(
    private readonly dataSource: DataSource,
    onWriteFailed: (error: unknown, calls: number) => void,
  ) {
    this.calls = new HeldWrites((calls) => this.insert(calls), { delayMs: CALL_LOG_WRITE_DELAY_MS, maxHeld: CALL_LOG_MAX_HELD, onWriteFailed });
  }

  /** Calls dropped because they could not be written while more came (a bound on memory while Postgres is away). */
  get droppedCalls(): number {
    return this.calls.dropped;
  }

  add(handle: string, call: ObservedCall & { taskId: string }): void {
    this.calls.add({ handle, call });
  }

  /** Writes every call held now (and waits for a write under way). */
  write(): Promise<void> {
    return this.calls.write();
  }

  /** Writes what is held and takes no more. */
  close(): Promise<void> {
    return this.calls.close();
  }

  private async insert(calls: HeldCall[]): Promise<void> {
    const column = <T>(of: (held: HeldCall) => T): T[] => calls.map(of);
    await this.dataSource.query(
      `INSERT INTO "notifier"."upstream_calls" ("task_id", "handle", "method", "outcome", "status_code", "duration_ms", "error", "at")
       SELECT "task_id", "handle", "method", "outcome", "status_code", "duration_ms", "error", "at"
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::text[], $8::timestamptz[])
         WITH ORDINALITY AS c("task_id", "handle", "method", "outcome", "status_code", "duration_ms", "error", "at", "n")
       ORDER BY "n"`,
      [
        column((held) => held.call.taskId),
        column((held) => held.handle),
        column((held) => held.call.method),
        column((held) => held.call.outcome),
        column((held) => held.call.statusCode),
        column((held) => held.call.durationMs),
        column((held) => held.call.error),
        column((held) => held.call.at.toISOString()),
      ],
    );
  }
}
