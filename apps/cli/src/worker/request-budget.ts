/**
 * The worker's share of its agent's rate limit, as a token bucket: `perMinute` requests a minute,
 * at most `perMinute` at once. Every call to the relay takes a token (waiting for one when none is
 * left); progress updates go out only while tokens to spare remain, so they never hold up the
 * calls that move tasks.
 */
export class RequestBudget {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = perMinute;
    this.refilledAt = now();
  }

  /** Tokens available now. */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** Takes a token if more than `reserve` are available; false otherwise. */
  trySpare(reserve: number): boolean {
    this.refill();
    if (this.tokens < reserve + 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** Takes a token, waiting until one is there. */
  async take(): Promise<void> {
    for (;;) {
      this.refill();
      if (this.tokens >= 1) {
        this.tokens -= 1;
        return;
      }
      const waitMs = Math.ceil(((1 - this.tokens) * 60_000) / this.perMinute);
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.refilledAt) * this.perMinute) / 60_000);
    this.refilledAt = now;
  }
}
