export type BreakerState = 'closed' | 'open' | 'half_open';

/** How an attempt at a destination ended, as far as its breaker cares. */
export type DestinationOutcome = 'answered' | 'unreachable';

export interface BreakerOptions {
  /** Consecutive unreachable attempts that open the breaker. */
  failures: number;
  /** The first open window; each failed probe doubles it. */
  openMs: number;
  maxOpenMs: number;
}

export interface BreakerTransition {
  destination: string;
  from: BreakerState;
  to: BreakerState;
  /** While open: how long until the probe. */
  openForMs: number | null;
  consecutiveFailures: number;
}

interface Breaker {
  state: BreakerState;
  consecutiveFailures: number;
  /** Windows opened since the destination last answered (the back-off grows with them). */
  openings: number;
  openUntil: number;
}

/** Destinations remembered at most: only those failing or held, the oldest closed ones forgotten first. */
const MAX_TRACKED = 10_000;

/**
 * A circuit breaker per destination (host and port), in this process. Closed, it counts
 * consecutive timeouts and connection failures; at the threshold it opens: nothing is sent there
 * for a window. When the window has passed it is half-open: one probe goes out; an answer (any
 * HTTP status) closes it, another failure opens it again for twice as long, up to the cap.
 */
export class DestinationBreakers {
  private readonly breakers = new Map<string, Breaker>();

  constructor(
    private readonly options: BreakerOptions,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Moves breakers whose window has passed to half-open, and answers the destinations still held
   * (with the time until their probe, in ms) and those half-open (one attempt at a time).
   */
  admission(): { held: Map<string, number>; probing: Set<string>; transitions: BreakerTransition[] } {
    const now = this.now();
    const held = new Map<string, number>();
    const probing = new Set<string>();
    const transitions: BreakerTransition[] = [];
    for (const [destination, breaker] of this.breakers) {
      if (breaker.state === 'open' && breaker.openUntil <= now) {
        breaker.state = 'half_open';
        transitions.push(this.transition(destination, 'open', breaker));
      }
      if (breaker.state === 'open') held.set(destination, breaker.openUntil - now);
      else if (breaker.state === 'half_open') probing.add(destination);
    }
    return { held, probing, transitions };
  }

  /** Records how an attempt at `destination` ended; answers the breaker's transition, if any. */
  record(destination: string, outcome: DestinationOutcome): BreakerTransition | null {
    const breaker = this.breakers.get(destination);
    if (outcome === 'answered') {
      if (!breaker) return null;
      this.breakers.delete(destination);
      if (breaker.state === 'closed') return null;
      return { destination, from: breaker.state, to: 'closed', openForMs: null, consecutiveFailures: 0 };
    }
    if (!breaker) {
      this.forgetOldestClosed();
      this.breakers.set(destination, { state: 'closed', consecutiveFailures: 0, openings: 0, openUntil: 0 });
      return this.record(destination, outcome);
    }
    breaker.consecutiveFailures += 1;
    // Attempts that were in flight when it opened change nothing more.
    if (breaker.state === 'open') return null;
    if (breaker.state === 'closed' && breaker.consecutiveFailures < this.options.failures) return null;
    const from = breaker.state;
    const windowMs = Math.min(Math.max(this.options.maxOpenMs, this.options.openMs), this.options.openMs * 2 ** Math.min(30, breaker.openings));
    breaker.state = 'open';
    breaker.openings += 1;
    breaker.openUntil = this.now() + windowMs;
    return this.transition(destination, from, breaker);
  }

  /** How many destinations are in each state other than closed. */
  counts(): { open: number; half_open: number } {
    const counts = { open: 0, half_open: 0 };
    for (const breaker of this.breakers.values()) if (breaker.state !== 'closed') counts[breaker.state] += 1;
    return counts;
  }

  stateOf(destination: string): BreakerState {
    return this.breakers.get(destination)?.state ?? 'closed';
  }

  private transition(destination: string, from: BreakerState, breaker: Breaker): BreakerTransition {
    return {
      destination,
      from,
      to: breaker.state,
      openForMs: breaker.state === 'open' ? breaker.openUntil - this.now() : null,
      consecutiveFailures: breaker.consecutiveFailures,
    };
  }

  private forgetOldestClosed(): void {
    if (this.breakers.size < MAX_TRACKED) return;
    for (const [destination, breaker] of this.breakers) {
      if (breaker.state === 'closed') {
        this.breakers.delete(destination);
        return;
      }
    }
  }
}
