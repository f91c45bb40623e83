/** How long a service may stay at its in-flight maximum, refusing every new request, before it reports itself not ready. */
export const SATURATED_NOT_READY_AFTER_MS = 5_000;

export interface ServiceLoadReport {
  in_flight: number;
  max_in_flight: number | null;
  /** Since when every new request has been refused for having too many in flight (ISO), or null. */
  saturated_since: string | null;
  /** Requests refused as `overloaded` since the process started. */
  shed_total: number;
  /** Requests dropped unanswered since the process started because their reply subject was not the caller's inbox. */
  misdirected_replies_total: number;
}

/**
 * The requests one service process is handling, shared by its NATS server (which counts them) and
 * its health answer (which reports a service that has refused everything for a while as overloaded,
 * so readiness stops sending it traffic instead of staying green while it sheds every call).
 */
export class ServiceLoad {
  private inFlightCount = 0;
  private saturatedAt: number | null = null;
  private shed = 0;
  private misdirectedReplies = 0;

  constructor(
    readonly maxInFlight = Number.POSITIVE_INFINITY,
    private readonly now: () => number = Date.now,
  ) {}

  get inFlight(): number {
    return this.inFlightCount;
  }

  /** Whether one more request may start. */
  get hasRoom(): boolean {
    return this.inFlightCount < this.maxInFlight;
  }

  started(): void {
    this.inFlightCount += 1;
    if (!this.hasRoom && this.saturatedAt === null) this.saturatedAt = this.now();
  }

  finished(): void {
    this.inFlightCount -= 1;
    if (this.hasRoom) this.saturatedAt = null;
  }

  refused(): void {
    this.shed += 1;
  }

  misdirected(): void {
    this.misdirectedReplies += 1;
  }

  /** At its maximum for at least `SATURATED_NOT_READY_AFTER_MS`: everything new has been refused that long. */
  get overloaded(): boolean {
    return this.saturatedAt !== null && this.now() - this.saturatedAt >= SATURATED_NOT_READY_AFTER_MS;
  }

  report(): ServiceLoadReport {
    return {
      in_flight: this.inFlightCount,
      max_in_flight: Number.isFinite(this.maxInFlight) ? this.maxInFlight : null,
      saturated_since: this.saturatedAt === null ? null : new Date(this.saturatedAt).toISOString(),
      shed_total: this.shed,
      misdirected_replies_total: this.misdirectedReplies,
    };
  }
}
