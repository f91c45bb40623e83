import { orgOfHandle } from '@app/contracts';

/** How long an org's quota read from the directory is used before it is read again (as the edge's directory cache). */
const LIMIT_TTL_MS = 1000;
const MAX_KNOWN_ORGS = 10_000;

/** A delivery as the org limit sees it. */
export interface OrgDelivery {
  id: string;
  channel: string;
  target_handle: string;
}

/** The org an upstream delivery counts to (the org of the agent it goes to); null for a delivery of another channel. */
export function upstreamOrgOf(delivery: Pick<OrgDelivery, 'channel' | 'target_handle'>): string | null {
  return delivery.channel === 'upstream' ? orgOfHandle(delivery.target_handle) : null;
}

/**
 * The orgs' upstream-in-flight quotas (docs/orgs.md#quotas), read from the directory and kept for
 * a second: at most that many deliveries to an org's upstream agents are in flight in one
 * notifier process, the rest wait their turn (they are not attempted, so neither failed nor
 * lost), beside the slot shares of each destination and owner. The claim of due deliveries takes
 * the slots each known org has left; an org seen for the first time is read before its deliveries
 * are attempted, and what it was given beyond its quota is handed back to wait.
 */
export class OrgUpstreamLimits {
  private readonly known = new Map<string, { limit: number | null; readAt: number }>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(
    private readonly lookup: (org: string) => Promise<number | null>,
    private readonly onLookupFailed: (org: string, error: unknown) => void,
    private readonly ttlMs = LIMIT_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The org's quota as last read (undefined: never read, null: none); one read longer ago than the cache time is read again meanwhile. */
  limitOf(org: string): number | null | undefined {
    const entry = this.known.get(org);
    if (!entry || this.now() - entry.readAt >= this.ttlMs) void this.load(org);
    return entry?.limit;
  }

  /** Reads the quotas of the orgs never read yet, and waits for them. */
  async learn(orgs: Iterable<string>): Promise<void> {
    await Promise.all([...new Set(orgs)].filter((org) => !this.known.has(org)).map((org) => this.load(org)));
  }

  /** The slots each org with a quota has left, with `inFlight` of its deliveries in flight. */
  slots(inFlight: ReadonlyMap<string, number>): Record<string, number> {
    const slots: Record<string, number> = {};
    for (const org of this.known.keys()) {
      const limit = this.limitOf(org);
      if (typeof limit === 'number') slots[org] = Math.max(0, limit - (inFlight.get(org) ?? 0));
    }
    return slots;
  }

  /**
   * Of `claimed` (in the order claimed), the ids of the upstream deliveries beyond their org's
   * quota, with `inFlight` of each org's deliveries in flight before them: those wait.
   */
  beyondLimits(claimed: readonly OrgDelivery[], inFlight: ReadonlyMap<string, number>): string[] {
    const counted = new Map(inFlight);
    const beyond: string[] = [];
    for (const delivery of claimed) {
      const org = upstreamOrgOf(delivery);
      if (org === null) continue;
      const limit = this.known.get(org)?.limit;
      const count = (counted.get(org) ?? 0) + 1;
      if (typeof limit === 'number' && count > limit) beyond.push(delivery.id);
      else counted.set(org, count);
    }
    return beyond;
  }

  private load(org: string): Promise<void> {
    const pending = this.loading.get(org);
    if (pending) return pending;
    const loaded = this.lookup(org)
      .then(
        (limit) => {
          this.known.delete(org);
          this.known.set(org, { limit, readAt: this.now() });
          if (this.known.size > MAX_KNOWN_ORGS) this.known.delete(this.known.keys().next().value as string);
        },
        (error: unknown) => {
          // Kept as it was (never read: no quota) until the next read: a directory that does not
          // answer holds no delivery back.
          this.known.set(org, { limit: this.known.get(org)?.limit ?? null, readAt: this.now() });
          this.onLookupFailed(org, error);
        },
      )
      .finally(() => this.loading.delete(org));
    this.loading.set(org, loaded);
    return loaded;
  }
}
