import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  chainPlace,
  decideChain,
  decideHold,
  decideToolPrompts,
  orgOfHandle,
  RelayError,
  TASK_LIMITS,
  type ChainLimits,
  type ChainRefusal,
  type HoldCandidate,
  type ParentChain,
  type SendRequest,
  type TaskHold,
  type TaskToolPrompts,
} from '@app/contracts';
import { handoffTraceOf, handoffTraceParent, newHandoffTrace, type HandoffTrace } from '@app/tracing';
import type { OutboxRow } from '../../outbox/committed-events';
import { applyArtifactInputs, artifactsJson } from './artifact-writes';
import { messageBytes } from './message-budget';
import type { IdempotencyKey } from './idempotency-key.entity';
import { beginOnChainLock, CHAIN_FACTS_SQL, PAIR_RECENT_SQL, PARENT_CHAIN_SQL } from './sql/chain-facts.sql';
import { CREATE_TASK_SQL, LOCK_CONTEXT_SQL, LOCK_CREATE_GUARD_SQL } from './sql/create-task.sql';
import { checkStoredBytes, checksStoredBytes, storedBytesCharge, storedBytesShard, type StoredBytesCharge, type StoredBytesQuotas } from './stored-bytes';
import { taskEvent, type OutboxTaskEvent } from './task-events';
import { nextTaskId } from './task-ids';
import type { RecentPairs } from './recent-pairs';
import { plainParts } from './task-repository';
import { firstText, type ArtifactRow, type MessageRow, type TaskRow } from './task-rows';

/** A new task with its first message and artifacts, as stored, built without reading it back, and its event to publish. */
export interface NewTask {
  task: TaskRow;
  message: MessageRow;
  artifacts: ArtifactRow[];
  events: OutboxRow[];
}

interface CreateOutcome {
  created: number;
  known_key: boolean;
  context_total: number;
  context_mine: number;
  event_position: string | null;
  tree_moved: boolean;
  /** The pair's handoffs of the last minute before the create, as its statement saw them (null: the rules read them). */
  pair_before: number | null;
  pair_moved: boolean;
}

/**
 * Where a new task sits in its chain: its parent and root (null: it is a root) and depth, and the
 * parent's chain for the rules; `treeSizeSeen`: the chain's tree size the rules decided from when
 * it was read before the chain's lock was granted (the create then checks it has not moved), null
 * when there is no parent or it was read under the lock; `pairKept`: the pair count the rules
 * decided from when this process kept it (RecentPairs; the create checks the pair holds no more),
 * null when it was read; `pairRead`: the count read.
 */
interface ChainLink {
  parent: { id: string; rootTaskId: string; lockKey: number; chain: ParentChain; trace: HandoffTrace | null } | null;
  depth: number;
  treeSizeSeen: number | null;
  pairKept: number | null;
  pairRead: number | null;
}

interface ChainFactsRow {
  id: string | null;
  root_task_id: string;
  depth: number;
  recipient_handle: string;
  trace_id: string | null;
  trace_span_id: string | null;
  lock_key: number;
  senders: string[] | null;
  root_created_at: Date | null;
  tree_size: number;
  pair_count: number;
  pair_oldest: Date | null;
}

type ParentRow = Pick<ChainFactsRow, 'id' | 'root_task_id' | 'depth' | 'recipient_handle' | 'trace_id' | 'trace_span_id' | 'lock_key'> & { id: string };
type ChainRow = Pick<ChainFactsRow, 'senders' | 'root_created_at' | 'tree_size' | 'pair_count' | 'pair_oldest'>;

/**
 * A check a create makes in its transaction, holding a lock that every create it must be exact
 * against also takes: the transaction takes the lock (`lockName`, an advisory lock to the end of the
 * transaction) before any other, then runs `check`, which throws to refuse the create having written
 * nothing. An org's open-handoffs quota is one (docs/orgs.md#quotas).
 */
export interface CreateGuard {
  lockName: string;
  check: (client: pg.PoolClient) => Promise<void>;
}

/** A create the chain bounds refused: the error every binding renders, nothing written. */
export function chainRefusalError(refusal: ChainRefusal, parent: { id: string; rootTaskId: string } | null): RelayError {
  return new RelayError(refusal.reason, refusal.message, {
    limit: refusal.limit,
    limit_name: refusal.limitName,
    path: refusal.path,
    ...(parent !== null ? { parent_task_id: parent.id, root_task_id: parent.rootTaskId } : {}),
    ...(refusal.retryAfterSeconds !== undefined ? { retry_after_seconds: refusal.retryAfterSeconds } : {}),
  });
}

/** The chain rules' decision on a create from its parent (null: a root) and facts; throws the refusal. */
function decideLink(
  request: SendRequest,
  limits: ChainLimits,
  now: Date,
  parentRow: ParentRow | null,
  chain: ChainRow,
  treeSizeSeen: number | null,
): ChainLink {
  const sender = request.caller;
  const recipient = request.recipient as NonNullable<SendRequest['recipient']>;
  const parent: ChainLink['parent'] =
    parentRow === null
      ? null
      : {
          id: parentRow.id,
          rootTaskId: parentRow.root_task_id,
          lockKey: parentRow.lock_key,
          trace: handoffTraceOf(parentRow),
          chain: {
            senders: chain.senders ?? [],
            recipient: parentRow.recipient_handle,
            depth: parentRow.depth,
            rootTaskId: parentRow.root_task_id,
            rootCreatedAt: chain.root_created_at ?? now,
            treeSize: chain.tree_size,
          },
        };
  const candidate = { sender: sender.handle, recipient: recipient.handle, now };
  const pairLastMinute = { count: chain.pair_count, oldest: chain.pair_oldest };
  const refusal = decideChain(limits, candidate, { parent: parent?.chain ?? null, pairLastMinute });
  if (refusal) throw chainRefusalError(refusal, parent);
  return {
    parent,
    depth: chainPlace(candidate, parent?.chain ?? null).depth,
    treeSizeSeen: parent ? treeSizeSeen : null,
    pairKept: null,
    pairRead: chain.pair_count,
  };
}

const minuteBefore = (now: Date): Date => new Date(now.getTime() - 60_000);

/**
 * Loads in one statement what the chain rules decide a create from (docs/chains.md): its parent
 * (the first it names that it takes part in; else, when its call carried a `traceparent`, the
 * handoff of that trace it received or sent), the parent's chain and the pair's handoffs of the
 * last minute; with `lock`, taking the chain's lock in the caller's transaction. Then lets the
 * rules decide, throwing the refusal. The facts come from the statement's snapshot, so the
 * returned link carries the tree size they saw, for the create to check under the lock.
 */
async function linkChain(client: pg.Pool | pg.PoolClient, request: SendRequest, limits: ChainLimits, now: Date, lock: boolean): Promise<ChainLink> {
  const named = request.parent_task_ids ?? [];
  const { rows } = await client.query<ChainFactsRow>({
    name: 'tasks-chain-facts',
    text: CHAIN_FACTS_SQL,
    values: [
      named.length > 0 ? null : (request.caller_trace_id ?? null),
      request.caller.id,
      named,
      (request.recipient as NonNullable<SendRequest['recipient']>).id,
      minuteBefore(now),
      limits.pairPerMinute,
      lock,
    ],
  });
  const row = rows[0];
  // A named task the sender takes no part in is answered as one that does not exist; a trace
  // whose handoffs the sender took no part in (or may no longer see) leaves the handoff a root.
  if (named.length > 0 && row.id === null) throw new RelayError('thread_not_found', 'Task not found', { field: 'parent_task_ids' });
  return decideLink(request, limits, now, row.id === null ? null : (row as ParentRow), row, row.tree_size);
}

/**
 * The link of a create that names no parent and carries no trace: a root, by the pair count alone,
 * the one this process kept when `pairs` gives one (RecentPairs.take) and the rules let it through
 * on it, else the count read: a refusal and its Retry-After always come from the table.
 */
async function rootLink(client: pg.Pool | pg.PoolClient, request: SendRequest, limits: ChainLimits, now: Date, pairs?: RecentPairs): Promise<ChainLink> {
  const recipientId = (request.recipient as NonNullable<SendRequest['recipient']>).id;
  const asRoot = (count: number, oldest: Date | null): ChainLink =>
    decideLink(request, limits, now, null, { senders: null, root_created_at: null, tree_size: 0, pair_count: count, pair_oldest: oldest }, null);
  const kept = pairs?.take(request.caller.id, recipientId, now.getTime()) ?? null;
  if (kept !== null) {
    try {
      return { ...asRoot(kept, null), pairKept: kept, pairRead: null };
    } catch {
      pairs?.ended(request.caller.id, recipientId, { took: true, created: false, moved: false }, now.getTime());
    }
  }
  const { rows } = await client.query<{ count: number; oldest: Date | null }>({
    name: 'tasks-pair-recent',
    text: PAIR_RECENT_SQL,
    values: [request.caller.id, recipientId, minuteBefore(now), limits.pairPerMinute],
  });
  return asRoot(rows[0].count, rows[0].oldest);
}

/**
 * Runs a create: the chain's facts and rules, then the create statement (docs/chains.md). A
 * create that joins no named context runs on the pool, its create statement committed on its own,
 * unless it has a parent: then, and for a create that claims a named context, in one transaction
 * behind the chain's lock (and the context's), a refusal rolling it back having written nothing.
 *
 * A create whose sender's org has a stored-bytes quota runs in a transaction too, behind the org's
 * lock (docs/orgs.md#quotas), taken last.
 *
 * Round trips: a root, two (its facts, its create), or one when this process kept its pair's
 * count (`pairs`, RecentPairs) and the pair holds no more handoffs than that (three when it holds
 * more: the create, the count read, the create again). A named parent: BEGIN, the facts with the
 * lock, the create, COMMIT. A parent found by the trace: the facts on the pool, then BEGIN with the
 * lock (one message), the create, COMMIT (a create with a `traceparent` that finds no parent stays
 * at two).
 *
 * Why the facts may be read before the lock is granted (in the same statement, or before the
 * transaction): of what the rules read, only the chain's tree size (the budget) is serialised by
 * the lock; the parent's place, its ancestors and the root's age do not change, and the pair count
 * is read without a lock anyway. Every create that adds to a tree holds the tree's lock from
 * before its insert until its commit, and a commit is visible before its locks are released. So
 * the create statement, which starts after this create's lock was granted, sees every handoff
 * the tree will hold until this create commits: it writes nothing and answers `tree_moved` when
 * the size differs from the one the rules saw, and the facts are then read again (under the lock
 * now, so final) and decided again. Two creates racing for a budget's last place thus never both
 * pass; the loser re-reads and is refused.
 *
 * With a `guard`, the create always runs in a transaction, which takes the guard's lock first
 * (before the chain's and the context's, so two guarded creates never wait on each other in a
 * cycle) and runs its check before anything else: BEGIN, the lock, the check, then as above.
 */
async function runCreate(
  pool: pg.Pool,
  request: SendRequest,
  limits: ChainLimits,
  now: Date,
  storedBytes: { charge: StoredBytesCharge; quotas: StoredBytesQuotas } | null,
  statement: (link: ChainLink) => pg.QueryConfig,
  guard?: CreateGuard,
  pairs?: RecentPairs,
): Promise<CreateOutcome> {
  const named = (request.parent_task_ids ?? []).length > 0;
  const inContext = request.context_id !== undefined;
  let link: ChainLink | undefined;
  if (!named && !inContext && !guard && !storedBytes) {
    link = request.caller_trace_id ? await linkChain(pool, request, limits, now, false) : await rootLink(pool, request, limits, now, pairs);
    if (link.parent === null) return runStatement(pool, request, limits, now, link, statement, pairs);
  }
  const client = await pool.connect();
  try {
    if (link) {
      await client.query(beginOnChainLock((link.parent as NonNullable<ChainLink['parent']>).lockKey));
    } else {
      await client.query('BEGIN');
      if (guard) {
        await client.query({ name: 'tasks-lock-create-guard', text: LOCK_CREATE_GUARD_SQL, values: [guard.lockName] });
        await guard.check(client);
      }
      link = named || request.caller_trace_id ? await linkChain(client, request, limits, now, true) : await rootLink(client, request, limits, now);
    }
    if (inContext) await client.query({ name: 'tasks-lock-context', text: LOCK_CONTEXT_SQL, values: [request.context_id] });
    if (storedBytes) await checkStoredBytes(client, storedBytes.charge, storedBytes.quotas);
    let outcome = await runStatement(client, request, limits, now, link, statement, pairs);
    if (outcome.tree_moved)
      outcome = await runStatement(client, request, limits, now, await relinkLocked(client, request, limits, now, link), statement, pairs);
    await client.query('COMMIT');
    return outcome;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/**
 * The create statement of `link`, telling `pairs` what it learned of the pair's count. A root that
 * decided from a kept count the pair has outgrown since (`pair_moved`: another writer added to it)
 * wrote nothing; it is decided again from the count read, and its statement runs again.
 */
async function runStatement(
  client: pg.Pool | pg.PoolClient,
  request: SendRequest,
  limits: ChainLimits,
  now: Date,
  link: ChainLink,
  statement: (link: ChainLink) => pg.QueryConfig,
  pairs: RecentPairs | undefined,
): Promise<CreateOutcome> {
  const sender = request.caller.id;
  const recipient = (request.recipient as NonNullable<SendRequest['recipient']>).id;
  const took = link.pairKept !== null;
  let outcome: CreateOutcome;
  try {
    outcome = (await client.query<CreateOutcome>(statement(link))).rows[0];
  } catch (error) {
    pairs?.ended(sender, recipient, { took, created: false, moved: false }, Date.now());
    throw error;
  }
  const before = outcome.pair_before ?? link.pairRead ?? undefined;
  pairs?.ended(sender, recipient, { took, before, created: outcome.created === 1, moved: outcome.pair_moved }, Date.now());
  if (!outcome.pair_moved) return outcome;
  return runStatement(client, request, limits, now, await rootLink(client, request, limits, now), statement, pairs);
}

/** The link decided again from the parent's chain read under its lock (its tree moved since the first read). */
async function relinkLocked(client: pg.PoolClient, request: SendRequest, limits: ChainLimits, now: Date, link: ChainLink): Promise<ChainLink> {
  const parent = link.parent as NonNullable<ChainLink['parent']>;
  const { rows } = await client.query<ChainRow>({
    name: 'tasks-chain-parent-facts',
    text: PARENT_CHAIN_SQL,
    values: [
      parent.id,
      parent.rootTaskId,
      request.caller.id,
      (request.recipient as NonNullable<SendRequest['recipient']>).id,
      minuteBefore(now),
      limits.pairPerMinute,
    ],
  });
  const parentRow: ParentRow = {
    id: parent.id,
    root_task_id: parent.rootTaskId,
    lock_key: parent.lockKey,
    depth: parent.chain.depth,
    recipient_handle: parent.chain.recipient,
    trace_id: parent.trace?.traceId ?? null,
    trace_span_id: parent.trace?.spanId ?? null,
  };
  return decideLink(request, limits, now, parentRow, rows[0], null);
}

/** What the rules of the recipient's trust policy see of a handoff: what it says about itself (sender, intent, artifacts, proposed action). */
function holdCandidate(request: SendRequest, depth = 0): HoldCandidate {
  return {
    depth,
    sender: request.caller.handle,
    recipient: (request.recipient as NonNullable<SendRequest['recipient']>).handle,
    intent: request.intent ?? 'inform',
    artifacts: request.artifacts ?? [],
    proposedAction: request.proposed_action ?? null,
  };
}

/** Who answers the new task's tool prompts: people when a tool-prompt rule matches (docs/decisions/0031-tool-prompts-answered-by-people.md), else (null) its sender. */
function toolPromptsOf(request: SendRequest, depth: number): TaskToolPrompts | null {
  const rules = request.tool_prompt_rules ?? [];
  if (rules.length === 0 || !request.recipient) return null;
  const decision = decideToolPrompts(rules, holdCandidate(request, depth));
  return decision ? { answered_by: 'approvers', rule: decision.rule, four_eyes: decision.fourEyes, answers: [] } : null;
}

/**
 * The hold a rule of the recipient's trust policy puts on the new task, or null when it is
 * delivered at once (docs/decisions/0024-held-handoffs.md): the rules see what the handoff says
 * about itself (sender, intent, artifacts, proposed action).
 */
function heldBy(request: SendRequest, now: Date, depth: number): TaskHold | null {
  const rules = request.hold_rules ?? [];
  if (rules.length === 0 || !request.recipient) return null;
  const decision = decideHold(rules, holdCandidate(request, depth));
  if (!decision) return null;
  return {
    rule: decision.rule,
    reason: decision.reason,
    expires_at: new Date(now.getTime() + decision.expiresAfterMinutes * 60_000).toISOString(),
    four_eyes: decision.fourEyes,
    outcome: 'held',
    decided_at: null,
    comment: null,
  };
}

/**
 * The one write of a create: the task, its first message, artifacts, audit row, idempotency keys
 * and `created` event in one prepared statement; a held task (a hold rule matched) is written in
 * the state `held` with its hold and a `held` event for its sender and the approvers, its recipient told nothing until it is approved. Returns null, having written nothing, when one of
 * `keys` was already used by this sender (the caller then replays or refuses through the keys).
 * Refuses, having written nothing, artifacts past a task's caps and a context the sender takes no
 * part in or that is full. `pairs`: the pair counts this process keeps (RecentPairs), none when not given.
 */
export async function createTask(
  pool: pg.Pool,
  request: SendRequest,
  keys: Array<Pick<IdempotencyKey, 'scope' | 'key'>>,
  requestHash: string,
  chainLimits: ChainLimits,
  guard?: CreateGuard,
  quotas?: StoredBytesQuotas,
  pairs?: RecentPairs,
): Promise<NewTask | null> {
  const sender = request.caller;
  const recipient = request.recipient as NonNullable<SendRequest['recipient']>;
  const now = new Date();
  const parts = plainParts(request.message.parts);
  const summary = firstText(parts);
  const id = nextTaskId();
  const partsJson = JSON.stringify(parts);
  const payloadJson = JSON.stringify(request.message.payload ?? {});
  const sizeOfMessage = messageBytes(summary, partsJson, payloadJson);
  const { artifacts } = applyArtifactInputs(id, [], request.artifacts, 'total');
  const stored = sizeOfMessage + artifacts.reduce((sum, artifact) => sum + artifact.size_bytes, 0);
  const charge = await storedBytesCharge(quotas, orgOfHandle(sender.handle), stored);
  let built: Omit<NewTask, 'events'> | undefined;
  let event: OutboxTaskEvent | undefined;
  let traceParent: string | null = null;
  const storedBytes = quotas && checksStoredBytes(charge) ? { charge, quotas } : null;
  const outcome = await runCreate(
    pool,
    request,
    chainLimits,
    now,
    storedBytes,
    (link) => {
      const held = heldBy(request, now, link.depth);
      const trace = newHandoffTrace(link.parent?.trace ?? null, request.caller_trace_id ?? null);
      traceParent = handoffTraceParent(trace);
      const task: TaskRow = {
        id,
        context_id: request.context_id ?? randomUUID(),
        sender_id: sender.id,
        sender_handle: sender.handle,
        sender_name: sender.name,
        sender_role: sender.role ?? null,
        recipient_id: recipient.id,
        recipient_handle: recipient.handle,
        recipient_name: recipient.name,
        recipient_role: recipient.role ?? null,
        state: held ? 'held' : 'pending',
        intent: request.intent ?? 'inform',
        summary,
        proposed_action: request.proposed_action ?? null,
        metadata: request.metadata ?? {},
        result_summary: null,
        reason: null,
        message_count: 1,
        version: 1,
        accepted_at: null,
        completed_at: null,
        cancelled_at: null,
        failed_at: null,
        rejected_at: null,
        created_at: now,
        updated_at: now,
        status_timestamp: now,
        hold: held,
        hold_expires_at: held ? new Date(held.expires_at) : null,
        hidden_from_recipient: held !== null,
        tool_prompts: toolPromptsOf(request, link.depth),
        parent_task_id: link.parent?.id ?? null,
        root_task_id: link.parent?.rootTaskId ?? null,
        depth: link.depth,
        trace_id: trace.traceId,
        trace_span_id: trace.spanId,
        root_sender_handle: link.parent?.chain.senders[0] ?? null,
      };
      const message: MessageRow = {
        task_id: task.id,
        sequence_no: 1,
        id: request.message.message_id ?? randomUUID(),
        author: 'sender',
        author_id: sender.id,
        from_handle: sender.handle,
        body: summary,
        parts,
        payload: request.message.payload ?? {},
        created_at: now,
      };
      event = taskEvent(held ? 'held' : 'created', task, message, now);
      built = { task, message, artifacts: artifacts.map(({ size_bytes: _size, ...artifact }) => artifact) };
      return {
        name: 'tasks-create-task',
        text: CREATE_TASK_SQL,
        values: [
          task.id,
          task.context_id,
          sender.id,
          sender.handle,
          sender.name,
          task.sender_role,
          recipient.id,
          recipient.handle,
          recipient.name,
          task.recipient_role,
          task.intent,
          summary,
          task.proposed_action ? JSON.stringify(task.proposed_action) : null,
          JSON.stringify(task.metadata),
          now,
          message.id,
          partsJson,
          keys.map((key) => key.scope),
          keys.map((key) => key.key),
          payloadJson,
          artifactsJson(artifacts),
          requestHash,
          event.id,
          event.subject,
          JSON.stringify(event.payload),
          sizeOfMessage,
          TASK_LIMITS.tasksPerContext,
          traceParent,
          task.state,
          held ? JSON.stringify(held) : null,
          task.hold_expires_at,
          task.tool_prompts ? JSON.stringify(task.tool_prompts) : null,
          task.parent_task_id,
          task.root_task_id,
          task.depth,
          task.trace_id,
          task.trace_span_id,
          task.root_sender_handle,
          link.treeSizeSeen,
          charge.org,
          storedBytesShard(task.id),
          stored,
          minuteBefore(now),
          chainLimits.pairPerMinute,
          link.pairKept,
        ],
      };
    },
    guard,
    pairs,
  );
  if (outcome.created === 1 && built && event && outcome.event_position !== null) {
    const published = {
      id: event.id,
      position: outcome.event_position,
      task_id: id,
      subject: event.subject,
      payload: event.payload,
      trace_parent: traceParent,
    };
    return { ...built, events: [published] };
  }
  if (outcome.known_key) return null;
  if (outcome.context_total > 0 && outcome.context_mine === 0) {
    throw new RelayError('invalid_params', 'context_id names a context you take no part in', { field: 'context_id' });
  }
  throw new RelayError('context_limit_reached', `The context holds the maximum of ${TASK_LIMITS.tasksPerContext} tasks`, {
    context_id: request.context_id,
    limit: TASK_LIMITS.tasksPerContext,
  });
}
