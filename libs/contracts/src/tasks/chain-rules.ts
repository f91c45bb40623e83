import { z } from 'zod';

/**
 * The bounds of handoff chains (docs/chains.md): a handoff may name the handoff it serves (its
 * parent), and the relay refuses one that would make a chain too deep, loop back to an agent on
 * its path, outgrow its chain's budget or age, or exceed the rate of handoffs between one pair of
 * agents. Pure rules, as the hold rules are: they decide from the handoff being created and facts
 * loaded before, never inside the store's statements.
 */

export const CHAIN_REFUSAL_REASONS = ['chain_depth_exceeded', 'chain_cycle', 'chain_budget_exhausted', 'pair_rate_limited'] as const;
export type ChainRefusalReason = (typeof CHAIN_REFUSAL_REASONS)[number];

/** A relay's chain bounds when its configuration says nothing else. */
export const CHAIN_DEFAULTS = {
  /** The deepest a handoff may sit below its chain's root (the root has depth 0). */
  maxDepth: 8,
  /** Handoffs in one chain's whole tree, its root included. */
  budget: 100,
  /** How long after its root was created a chain takes new handoffs. */
  maxAgeMinutes: 24 * 60,
  /** Handoffs from one agent to another per minute, linked or not. */
  pairPerMinute: 30,
} as const;

/** The most tasks one handoff may name as references; the parent is the first one its sender takes part in. */
export const CHAIN_REFERENCE_LIMIT = 16;

export interface ChainLimits {
  maxDepth: number;
  budget: number;
  maxAgeMinutes: number;
  pairPerMinute: number;
  /** Whether an agent appearing twice on a chain's path refuses the handoff. */
  refuseCycles: boolean;
  /** Pairs of handles (`a@org:b@org`, either order) that may meet twice on a path: a review loop both sides want. */
  cycleAllowedPairs: ReadonlyArray<readonly [string, string]>;
}

export const DEFAULT_CHAIN_LIMITS: ChainLimits = { ...CHAIN_DEFAULTS, refuseCycles: true, cycleAllowedPairs: [] };

/** The handoff being created, as the chain rules see it. */
export interface ChainCandidate {
  sender: string;
  recipient: string;
  now: Date;
}

/** The parent's chain, loaded before the create. */
export interface ParentChain {
  /** The senders of the parent's ancestors and of the parent, root first. */
  senders: readonly string[];
  /** The parent's recipient. */
  recipient: string;
  depth: number;
  rootTaskId: string;
  rootCreatedAt: Date;
  /** Handoffs in the chain's tree so far, its root included. */
  treeSize: number;
}

export interface ChainFacts {
  /** Null for a handoff that names no parent (a root). */
  parent: ParentChain | null;
  /** Handoffs from the sender to the recipient created in the last minute, and the oldest of them. */
  pairLastMinute: { count: number; oldest: Date | null };
}

export interface ChainRefusal {
  reason: ChainRefusalReason;
  message: string;
  /** The limit that refused it, and which one (its unit in its name). */
  limit: number;
  limitName: 'max_depth' | 'cycles' | 'budget' | 'max_age_minutes' | 'pair_per_minute';
  /** The handles of the chain's path from its root's sender to the refused recipient. */
  path: string[];
  /** Seconds after which a pair-rate refusal would pass (pair_rate_limited only). */
  retryAfterSeconds?: number;
}

/** Where a new handoff would sit: its depth and its path of handles (the root's sender first). */
export interface ChainPlace {
  depth: number;
  path: string[];
}

/**
 * The path of a handoff: the senders from the root down, then the recipient. A handoff its
 * parent's sender makes (a second helper for the same task) continues from that sender, which is
 * not counted twice.
 */
export function chainPlace(candidate: ChainCandidate, parent: ParentChain | null): ChainPlace {
  if (!parent) return { depth: 0, path: [candidate.sender, candidate.recipient] };
  const path = [...parent.senders];
  if (path[path.length - 1] !== candidate.sender) path.push(candidate.sender);
  path.push(candidate.recipient);
  return { depth: parent.depth + 1, path };
}

function cycleAllowed(limits: ChainLimits, first: string, second: string): boolean {
  return limits.cycleAllowedPairs.some(([a, b]) => (a === first && b === second) || (a === second && b === first));
}

/** The first agent that appears twice on the path (its earlier neighbour names the pair), or null. */
function repeatedAgent(limits: ChainLimits, path: readonly string[]): string | null {
  for (let index = 1; index < path.length; index++) {
    const earlier = path.indexOf(path[index]);
    if (earlier === index) continue;
    // The pair is the repeated agent and the one that handed work back to it.
    if (cycleAllowed(limits, path[index], path[index - 1])) continue;
    return path[index];
  }
  return null;
}

/**
 * Whether the chain bounds refuse a handoff, and why; null when it may be created. The pair rate
 * applies to every handoff; the other bounds to a handoff that names its parent.
 */
export function decideChain(limits: ChainLimits, candidate: ChainCandidate, facts: ChainFacts): ChainRefusal | null {
  const place = chainPlace(candidate, facts.parent);
  const pair = facts.pairLastMinute;
  if (pair.count >= limits.pairPerMinute) {
    const leavesAt = (pair.oldest?.getTime() ?? candidate.now.getTime()) + 60_000;
    return {
      reason: 'pair_rate_limited',
      message: `${candidate.sender} has sent ${candidate.recipient} ${pair.count} handoffs in the last minute, the most this relay allows`,
      limit: limits.pairPerMinute,
      limitName: 'pair_per_minute',
      path: place.path,
      retryAfterSeconds: Math.max(1, Math.ceil((leavesAt - candidate.now.getTime()) / 1000)),
    };
  }
  const parent = facts.parent;
  if (!parent) return null;
  if (place.depth > limits.maxDepth) {
    return {
      reason: 'chain_depth_exceeded',
      message: `The handoff would sit at depth ${place.depth} of its chain; the most is ${limits.maxDepth}`,
      limit: limits.maxDepth,
      limitName: 'max_depth',
      path: place.path,
    };
  }
  const repeated = limits.refuseCycles ? repeatedAgent(limits, place.path) : null;
  if (repeated !== null) {
    return {
      reason: 'chain_cycle',
      message: `${repeated} already takes part in this chain (${place.path.join(' → ')})`,
      limit: 1,
      limitName: 'cycles',
      path: place.path,
    };
  }
  if (parent.treeSize >= limits.budget) {
    return {
      reason: 'chain_budget_exhausted',
      message: `The chain of task ${parent.rootTaskId} holds ${parent.treeSize} handoffs, the most it may`,
      limit: limits.budget,
      limitName: 'budget',
      path: place.path,
    };
  }
  const ageMinutes = (candidate.now.getTime() - parent.rootCreatedAt.getTime()) / 60_000;
  if (ageMinutes > limits.maxAgeMinutes) {
    return {
      reason: 'chain_budget_exhausted',
      message: `The chain of task ${parent.rootTaskId} started ${Math.floor(ageMinutes)} minutes ago; it takes handoffs for ${limits.maxAgeMinutes} minutes`,
      limit: limits.maxAgeMinutes,
      limitName: 'max_age_minutes',
      path: place.path,
    };
  }
  return null;
}

/** `a@org:b@org,c@org:d@org` → pairs; what is not a pair of handles is refused, naming it. */
export function parseCyclePairs(text: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const entry of text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0)) {
    const [first, second, ...rest] = entry.split(':').map((handle) => handle.trim().toLowerCase());
    if (!first?.includes('@') || !second?.includes('@') || rest.length > 0) throw new Error(`${JSON.stringify(entry)} is not a pair of handles (a@org:b@org)`);
    pairs.push([first, second]);
  }
  return pairs;
}

/** A handle on either side of a pair the policy lets meet twice on a path: `a@org:b@org`. */
const CYCLE_PAIR = /^[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9.-]{0,126}:[a-z0-9][a-z0-9._-]{0,127}@[a-z0-9][a-z0-9.-]{0,126}$/;

/**
 * A recipient's trust policy's own chain bounds (docs/chains.md): each one stated replaces the
 * relay's for the handoffs to that recipient.
 */
export const CHAIN_POLICY_SCHEMA = z
  .object({
    max_depth: z.number().int().min(0).max(1000).optional(),
    budget: z.number().int().min(1).max(1_000_000).optional(),
    max_age_minutes: z.number().int().min(1).max(525_600).optional(),
    pair_per_minute: z.number().int().min(1).max(100_000).optional(),
    refuse_cycles: z.boolean().optional(),
    /** Pairs of handles that may meet twice on a chain's path (a review loop both sides want). */
    cycle_allowed_pairs: z.array(z.string().trim().toLowerCase().regex(CYCLE_PAIR, 'a pair is two handles, a@org:b@org')).max(100).optional(),
  })
  .strict();

export type ChainPolicy = z.infer<typeof CHAIN_POLICY_SCHEMA>;

/** What is wrong with a trust policy's chain bounds, naming the place (`.max_depth: …`), or null. */
export function chainPolicyProblem(value: unknown): string | null {
  const parsed = CHAIN_POLICY_SCHEMA.safeParse(value);
  if (parsed.success) return null;
  const issue = parsed.error.issues[0];
  const place = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  return `${place}: ${issue.message}`;
}

/**
 * The bounds a handoff is held to: the relay's, then what the recipient's org states in their
 * place, then what the recipient's trust policy states in theirs (docs/chains.md). Each level is
 * given lowest first; a field it states replaces the one below, and its `cycle_allowed_pairs` add
 * to those below (a pair allowed anywhere may meet twice).
 */
export function chainLimitsWith(relay: ChainLimits, ...stated: ReadonlyArray<ChainPolicy | undefined>): ChainLimits {
  return stated.reduce<ChainLimits>(
    (below, level) =>
      level
        ? {
            maxDepth: level.max_depth ?? below.maxDepth,
            budget: level.budget ?? below.budget,
            maxAgeMinutes: level.max_age_minutes ?? below.maxAgeMinutes,
            pairPerMinute: level.pair_per_minute ?? below.pairPerMinute,
            refuseCycles: level.refuse_cycles ?? below.refuseCycles,
            cycleAllowedPairs: [...below.cycleAllowedPairs, ...parseCyclePairs((level.cycle_allowed_pairs ?? []).join(','))],
          }
        : below,
    relay,
  );
}
