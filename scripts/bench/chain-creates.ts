/**
 * The `create-linked` scenario's parts: the kinds of create it measures, and the chains' roots its
 * linked creates serve (per client slot, spread so that no chain reaches its budget).
 */
import { randomBytes } from 'node:crypto';
import type { HttpClient } from './load-generator';
import { relayCreateRoot, type RelayAgent } from './relay-fixture';

/** The three kinds of create the scenario measures in alternating rounds: the same create naming no parent, naming one, linked by its trace. */
export const CHAIN_CREATES = ['create-unlinked', 'create-linked', 'create-traced'] as const;
export type ChainCreate = (typeof CHAIN_CREATES)[number];

/**
 * Children one root is given at most: below the relay's default chain budget (100 handoffs in a
 * chain's tree, its root included), so that no create of the scenario is refused by it and every
 * tree stays the size real chains have.
 */
export const CHILDREN_PER_ROOT = 90;

export interface ChainRoot {
  taskId: string;
  /** The W3C trace id the root was created in (its chain's trace). */
  traceId: string;
  children: number;
}

/**
 * Per client slot, the roots its sender received from `origin` (so that it may name them, and its
 * trace-linked creates find them), handed out round-robin among those with room left.
 */
export class ChainRoots {
  private readonly bySlot = new Map<number, ChainRoot[]>();
  private readonly cursor = new Map<number, number>();
  /** Roots a window had to make because its slot's ran out (their create's CPU falls in the window). */
  madeDuringWindows = 0;
  /** Every root made, to count in Postgres at the end. */
  readonly made: string[] = [];

  constructor(
    private readonly client: HttpClient,
    private readonly origin: RelayAgent,
    private readonly senderOf: (slot: number) => RelayAgent,
  ) {}

  private async make(slot: number): Promise<ChainRoot> {
    const traceId = randomBytes(16).toString('hex');
    const taskId = await relayCreateRoot(this.client, this.origin, this.senderOf(slot), traceId, this.made.length);
    this.made.push(taskId);
    const root = { taskId, traceId, children: 0 };
    this.bySlot.set(slot, [...(this.bySlot.get(slot) ?? []), root]);
    return root;
  }

  private room(slot: number): number {
    return (this.bySlot.get(slot) ?? []).reduce((sum, root) => sum + CHILDREN_PER_ROOT - root.children, 0);
  }

  /**
   * Before a window of `requests` creates at `concurrency` (unmeasured): every slot gets roots with
   * room for its share and half again (a slot that still runs out makes one during the window).
   */
  async prepare(concurrency: number, requests: number): Promise<void> {
    const wanted = Math.min(requests, Math.ceil((1.5 * requests) / concurrency) + 10);
    await Promise.all(
      Array.from({ length: concurrency }, async (_, slot) => {
        this.bySlot.set(
          slot,
          (this.bySlot.get(slot) ?? []).filter((root) => root.children < CHILDREN_PER_ROOT),
        );
        while (this.room(slot) < wanted) await this.make(slot);
      }),
    );
  }

  /** The next root of the slot with room, round-robin; its child counted. */
  async next(slot: number): Promise<ChainRoot> {
    const roots = this.bySlot.get(slot) ?? [];
    const start = this.cursor.get(slot) ?? 0;
    for (let step = 0; step < roots.length; step++) {
      const position = (start + step) % roots.length;
      const root = roots[position];
      if (root.children < CHILDREN_PER_ROOT) {
        this.cursor.set(slot, position + 1);
        root.children += 1;
        return root;
      }
    }
    this.madeDuringWindows += 1;
    const root = await this.make(slot);
    root.children += 1;
    return root;
  }
}
