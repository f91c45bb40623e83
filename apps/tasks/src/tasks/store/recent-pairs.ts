/** The pair rate's window: a count older than this has let every handoff it counted leave it. */
const PAIR_WINDOW_MS = 60_000;

/** The most pairs a process keeps a count of; the one answered longest ago is forgotten first. */
export const RECENT_PAIRS_MAX = 10_000;

interface PairCount {
  /** The pair's handoffs of the last minute after this process's last create of it, at least (a count only grows until read again). */
  count: number;
  /** When a create last answered it (ms). */
  answeredAt: number;
  /** This process's creates of the pair that took the count and have not ended yet. */
  underWay: number;
  /** Until when (ms) the count is read before each create of the pair: another writer added to it. */
  readUntil: number;
}

/** How a create of a pair ended, for RecentPairs.ended. */
export interface PairCreateEnd {
  /** It decided from the kept count (RecentPairs.take answered one). */
  took: boolean;
  /** The pair's handoffs of the last minute before it, as it read them or its statement saw them; undefined: it failed before knowing. */
  before?: number;
  created: boolean;
  /** Its statement found the pair holding more handoffs than the count it took, and wrote nothing. */
  moved: boolean;
}

/**
 * The pair rate's count (docs/chains.md) as this process's creates of each pair left it, so a
 * create that names no parent can decide from it without reading the count first. The count a
 * create takes is the last one answered plus the creates of the pair still under way here, so
 * it is never below what the pair holds unless another writer added to it; the create's
 * statement checks that (CREATE_TASK_SQL writes nothing and answers `pair_moved` when the pair
 * holds more than the count taken), and the pair is then read before each create for a minute.
 * It keeps no decision, only a fact the rules decide from, checked by the statement as the chain's
 * tree size is; a create the rules refuse on a kept count reads the count and is decided again.
 */
export class RecentPairs {
  private readonly pairs = new Map<string, PairCount>();

  constructor(private readonly max = RECENT_PAIRS_MAX) {}

  /** The count a create of the pair may decide from (counted as under way until `ended`), or null: read it. */
  take(sender: string, recipient: string, nowMs: number): number | null {
    const pair = this.pairs.get(pairKey(sender, recipient));
    if (!pair || nowMs - pair.answeredAt >= PAIR_WINDOW_MS || nowMs < pair.readUntil) return null;
    return pair.count + pair.underWay++;
  }

  /** A create of the pair ended (also when it threw): what it learned of the pair's count. */
  ended(sender: string, recipient: string, end: PairCreateEnd, nowMs: number): void {
    const key = pairKey(sender, recipient);
    const pair = this.pairs.get(key);
    if (pair && end.took) pair.underWay = Math.max(0, pair.underWay - 1);
    if (end.moved) {
      if (pair) pair.readUntil = nowMs + PAIR_WINDOW_MS;
      return;
    }
    if (end.before === undefined) return;
    const after = end.before + (end.created ? 1 : 0);
    if (pair && nowMs - pair.answeredAt < PAIR_WINDOW_MS) {
      // Creates under way together answer out of order; the highest count is the latest.
      pair.count = end.took ? Math.max(pair.count, after) : after;
      pair.answeredAt = nowMs;
      this.pairs.delete(key);
      this.pairs.set(key, pair);
      return;
    }
    if (!pair && this.pairs.size >= this.max) this.pairs.delete(this.pairs.keys().next().value as string);
    this.pairs.delete(key);
    this.pairs.set(key, { count: after, answeredAt: nowMs, underWay: pair?.underWay ?? 0, readUntil: pair?.readUntil ?? 0 });
  }

  /** How many pairs are kept. */
  get size(): number {
    return this.pairs.size;
  }
}

function pairKey(sender: string, recipient: string): string {
  return `${sender} ${recipient}`;
}
