import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import {
  chainPlace,
  decideChain,
  decideHold,
  decideToolPrompts,
  RelayError,
  TASK_LIMITS,
  type ChainFacts,
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
import { PAIR_RECENT_SQL, PARENT_CHAIN_SQL, PARENT_TASK_SQL, TRACE_PARENT_SQL } from './sql/chain-facts.sql';
import { CREATE_TASK_SQL, LOCK_CONTEXT_SQL } from './sql/create-task.sql';
import { taskEvent, type OutboxTaskEvent } from './task-events';
import { nextTaskId } from './task-ids';
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
}

/** Where a new task sits in its chain: its parent and root (null: it is a root) and depth, and the parent's chain for the rules. */
interface ChainLink {
  parent: { id: string; rootTaskId: string; chain: ParentChain; trace: HandoffTrace | null } | null;
  depth: number;
}

/**
 * The parents a create may serve, in order: those it names; else, when its call carried a
 * `traceparent`, the handoff of that trace it received (or sent), found by one indexed read
 * (docs/chains.md). `byTrace`: the parent was not named, so losing it is no error.
 */
interface ParentCandidates {
  ids: string[];
  byTrace: boolean;
}

async function parentCandidates(pool: pg.Pool, request: SendRequest): Promise<ParentCandidates> {
  const named = request.parent_task_ids ?? [];
  if (named.length > 0 || !request.caller_trace_id) return { ids: named, byTrace: false };
  const { rows } = await pool.query<{ id: string }>({
    name: 'tasks-chain-trace-parent',
    text: TRACE_PARENT_SQL,
    values: [request.caller_trace_id, request.caller.id],
  });
  return { ids: rows.map((row) => row.id), byTrace: true };
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

/**
 * Loads what the chain rules decide from (the parent the sender names and its chain, the pair's
 * handoffs of the last minute), holding the chain's lock when there is a parent, and lets them
 * decide (docs/chains.md). Throws the refusal; the caller's transaction then writes nothing.
 */
async function linkChain(
  client: pg.Pool | pg.PoolClient,
  request: SendRequest,
  candidates: ParentCandidates,
  limits: ChainLimits,
  now: Date,
): Promise<ChainLink> {
  const sender = request.caller;
  const recipient = request.recipient as NonNullable<SendRequest['recipient']>;
  let parent: ChainLink['parent'] = null;
  let pairLastMinute: ChainFacts['pairLastMinute'] | null = null;
  const row =
    candidates.ids.length === 0
      ? undefined
      : (
          await client.query<{
            id: string;
            root_task_id: string;
            depth: number;
            recipient_handle: string;
            trace_id: string | null;
            trace_span_id: string | null;
          }>({ name: 'tasks-chain-parent', text: PARENT_TASK_SQL, values: [candidates.ids, sender.id] })
        ).rows[0];
  // A named task the sender takes no part in is answered as one that does not exist; one its
  // trace found that it may no longer see (held from it since) leaves the handoff a root.
  if (candidates.ids.length > 0 && !row && !candidates.byTrace) throw new RelayError('thread_not_found', 'Task not found', { field: 'parent_task_ids' });
  if (row) {
    const facts = await client.query<{
      senders: string[] | null;
      root_created_at: Date | null;
      tree_size: number;
      pair_count: number;
      pair_oldest: Date | null;
    }>({
      name: 'tasks-chain-facts',
      text: PARENT_CHAIN_SQL,
      values: [row.id, row.root_task_id, sender.id, recipient.id, new Date(now.getTime() - 60_000)],
    });
    const chain = facts.rows[0];
    pairLastMinute = { count: chain.pair_count, oldest: chain.pair_oldest };
    parent = {
      id: row.id,
      rootTaskId: row.root_task_id,
      trace: handoffTraceOf(row),
      chain: {
        senders: chain.senders ?? [],
        recipient: row.recipient_handle,
        depth: row.depth,
        rootTaskId: row.root_task_id,
        rootCreatedAt: chain.root_created_at ?? now,
        treeSize: chain.tree_size,
      },
    };
  }
  pairLastMinute ??= (
    await client.query<{ count: number; oldest: Date | null }>({
      name: 'tasks-pair-recent',
      text: PAIR_RECENT_SQL,
      values: [sender.id, recipient.id, new Date(now.getTime() - 60_000)],
    })
  ).rows[0];
  const candidate = { sender: sender.handle, recipient: recipient.handle, now };
  const refusal = decideChain(limits, candidate, { parent: parent?.chain ?? null, pairLastMinute });
  if (refusal) throw chainRefusalError(refusal, parent);
  return { parent, depth: chainPlace(candidate, parent?.chain ?? null).depth };
}

/**
 * Runs a create: the chain's facts and rules, then the create statement, in one transaction
 * behind the chain's lock (a create with a parent) and the context's lock (a create that joins a
 * named context); a refusal rolls it back having written nothing. A create with neither runs its
 * two statements on the pool, the create one committed on its own.
 */
async function runCreate(
  pool: pg.Pool,
  request: SendRequest,
  limits: ChainLimits,
  now: Date,
  statement: (link: ChainLink) => pg.QueryConfig,
): Promise<CreateOutcome> {
  const candidates = await parentCandidates(pool, request);
  if (candidates.ids.length === 0 && request.context_id === undefined) {
    const link = await linkChain(pool, request, candidates, limits, now);
    return (await pool.query<CreateOutcome>(statement(link))).rows[0];
  }
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const link = await linkChain(client, request, candidates, limits, now);
    if (request.context_id !== undefined) await client.query({ name: 'tasks-lock-context', text: LOCK_CONTEXT_SQL, values: [request.context_id] });
    const { rows } = await client.query<CreateOutcome>(statement(link));
    await client.query('COMMIT');
    return rows[0];
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
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
 * part in or that is full.
 */
export async function createTask(
  pool: pg.Pool,
  request: SendRequest,
  keys: Array<Pick<IdempotencyKey, 'scope' | 'key'>>,
  requestHash: string,
  chainLimits: ChainLimits,
): Promise<NewTask | null> {
  const sender = request.caller;
  const recipient = request.recipient as NonNullable<SendRequest['recipient']>;
  const now = new Date();
  const parts = plainParts(request.message.parts);
  const summary = firstText(parts);
  const id = nextTaskId();
  let built: Omit<NewTask, 'events'> | undefined;
  let event: OutboxTaskEvent | undefined;
  let traceParent: string | null = null;
  const outcome = await runCreate(pool, request, chainLimits, now, (link) => {
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
    const { artifacts } = applyArtifactInputs(task.id, [], request.artifacts, 'total');
    event = taskEvent(held ? 'held' : 'created', task, message, now);
    const partsJson = JSON.stringify(parts);
    const payloadJson = JSON.stringify(message.payload);
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
        messageBytes(summary, partsJson, payloadJson),
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
      ],
    };
  });
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
