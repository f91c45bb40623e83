/**
 * The plans of the tasks service's writes: the one-statement create, an append (a message added
 * to an existing task) and a transition (the accept of a pending task). Each statement is the one
 * the service's own use case binds (createTask, changeTask with the append's rules, transitionTask),
 * caught on its way to Postgres, then prepared as the service prepares it and run with
 * EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) inside a transaction that is rolled back: nothing
 * stays written, which explainWrites checks on every row the statements could have touched.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { DEFAULT_CHAIN_LIMITS, RelayError, type ParticipantRefDto, type SendRequest, type TransitionRequest } from '@app/contracts';
import { appendChange } from '../../apps/tasks/src/tasks/use-cases/send-task';
import { idempotencyKeys, sendRequestHash } from '../../apps/tasks/src/tasks/use-cases/send-idempotency';
import { changeTask } from '../../apps/tasks/src/tasks/store/change-write';
import { createTask } from '../../apps/tasks/src/tasks/store/create-write';
import { RecentPairs } from '../../apps/tasks/src/tasks/store/recent-pairs';
import { transitionTask } from '../../apps/tasks/src/tasks/store/transition-write';
import type { RelayAgent, RelayPair } from './relay-fixture';

export type WriteOperation = 'create' | 'append' | 'transition';

/** What one write's plan cost, as EXPLAIN (ANALYZE, BUFFERS, WAL) counted it. */
export interface WritePlanSummary {
  operation: WriteOperation;
  /** The service's name of the prepared statement. */
  statement: string;
  executionMs: number;
  planningMs: number;
  /** Shared buffers of the whole statement: its main query and every data-modifying CTE run outside it. */
  sharedHit: number;
  sharedRead: number;
  sharedDirtied: number;
  walRecords: number;
  walFpi: number;
  walBytes: number;
  /** Every plan node, `Node Type[ on relation][ using index]`, once each, in plan order. */
  nodes: string[];
  /** The indexes the plan reads (scans and ON CONFLICT arbiters), once each. */
  indexes: string[];
  /** Triggers (the foreign keys' checks): their work is counted in no plan node's buffers or WAL. */
  triggers: Array<{ name: string; calls: number; ms: number }>;
}

export interface WritePlan extends WritePlanSummary {
  /** EXPLAIN's own JSON. */
  plan: unknown;
}

interface PlanNode {
  'Node Type': string;
  Operation?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'CTE Name'?: string;
  'Subplan Name'?: string;
  'Parent Relationship'?: string;
  'Conflict Arbiter Indexes'?: string[];
  'Actual Loops'?: number;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Shared Dirtied Blocks'?: number;
  'WAL Records'?: number;
  'WAL FPI'?: number;
  'WAL Bytes'?: number;
  Plans?: PlanNode[];
}

interface ExplainOutput {
  Plan: PlanNode;
  'Planning Time'?: number;
  'Execution Time': number;
  Triggers?: Array<{ 'Trigger Name': string; Calls: number; Time: number }>;
}

function allNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(allNodes)];
}

/**
 * The nodes whose counts add up to the statement's: a node's counts include what ran inside it,
 * so the main query counts every CTE it pulled rows from; a data-modifying CTE that no executed
 * CTE Scan reads is run by Postgres after the main query (ExecPostprocessPlan), inside no other
 * node, and counts apart.
 */
function countedRoots(plan: PlanNode): PlanNode[] {
  const nodes = allNodes(plan);
  const pulled = new Set(nodes.filter((node) => node['Node Type'] === 'CTE Scan' && (node['Actual Loops'] ?? 0) > 0).map((node) => node['CTE Name']));
  const detached = nodes.filter(
    (node) => node['Node Type'] === 'ModifyTable' && node['Parent Relationship'] === 'InitPlan' && !pulled.has(node['Subplan Name']?.replace(/^CTE /, '')),
  );
  return [plan, ...detached];
}

function describe(node: PlanNode): string {
  const type = node['Node Type'] === 'ModifyTable' ? (node.Operation ?? 'ModifyTable') : node['Node Type'];
  return `${type}${node['Relation Name'] ? ` on ${node['Relation Name']}` : ''}${node['Index Name'] ? ` using ${node['Index Name']}` : ''}`;
}

/** The summary of one EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) output (the JSON array of one plan). */
export function summarizeWritePlan(operation: WriteOperation, statement: string, explain: unknown): WritePlanSummary {
  const [output] = explain as ExplainOutput[];
  const roots = countedRoots(output.Plan);
  const sum = (key: keyof PlanNode): number => roots.reduce((total, node) => total + ((node[key] as number | undefined) ?? 0), 0);
  const nodes = allNodes(output.Plan);
  return {
    operation,
    statement,
    executionMs: output['Execution Time'],
    planningMs: output['Planning Time'] ?? 0,
    sharedHit: sum('Shared Hit Blocks'),
    sharedRead: sum('Shared Read Blocks'),
    sharedDirtied: sum('Shared Dirtied Blocks'),
    walRecords: sum('WAL Records'),
    walFpi: sum('WAL FPI'),
    walBytes: sum('WAL Bytes'),
    nodes: [...new Set(nodes.map(describe))],
    indexes: [...new Set(nodes.flatMap((node) => [...(node['Index Name'] ? [node['Index Name']] : []), ...(node['Conflict Arbiter Indexes'] ?? [])]))],
    triggers: (output.Triggers ?? []).map((trigger) => ({ name: trigger['Trigger Name'], calls: trigger.Calls, ms: trigger.Time })),
  };
}

/** The markdown table of the writes' plans at each table size. */
export function writePlansTable(sizes: Array<{ size: number; writes: WritePlanSummary[] }>): string {
  const lines = [
    '| tasks | write | execution ms | shared hit | shared read | dirtied | WAL records | WAL FPI | WAL bytes | triggers ms | indexes read |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const { size, writes } of sizes) {
    for (const write of writes) {
      const triggerMs = write.triggers.reduce((total, trigger) => total + trigger.ms, 0);
      lines.push(
        `| ${size.toLocaleString('en-US')} | ${write.operation} | ${write.executionMs.toFixed(3)} | ${write.sharedHit} | ${write.sharedRead} | ${write.sharedDirtied} | ${write.walRecords} | ${write.walFpi} | ${write.walBytes.toLocaleString('en-US')} | ${triggerMs.toFixed(3)} | ${write.indexes.join(', ') || '–'} |`,
      );
    }
  }
  return lines.join('\n');
}

/** One line per write, for the console beside the reads' plans. */
export function writePlanLines(writes: WritePlanSummary[]): string[] {
  return writes.map(
    (write) =>
      `${write.operation} (${write.statement}): ${write.executionMs.toFixed(3)} ms, shared hit ${write.sharedHit} read ${write.sharedRead} dirtied ${write.sharedDirtied}, WAL ${write.walRecords} records ${write.walFpi} FPI ${write.walBytes} bytes; ${write.nodes.join(' · ')}${
        write.triggers.length ? `; triggers ${write.triggers.map((trigger) => `${trigger.name} ×${trigger.calls} ${trigger.ms.toFixed(3)} ms`).join(', ')}` : ''
      }`,
  );
}

/** A parameter value as a literal of EXECUTE's argument list (arrays in Postgres's array input form). */
export function sqlLiteral(client: Pick<pg.ClientBase, 'escapeLiteral'>, value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean' || typeof value === 'number') return String(value);
  if (value instanceof Date) return client.escapeLiteral(value.toISOString());
  if (typeof value === 'string') return client.escapeLiteral(value);
  if (Array.isArray(value)) {
    const items = value.map((item) => {
      if (item === null) return 'NULL';
      if (typeof item !== 'string') throw new Error(`no array literal for an item of type ${typeof item}`);
      return `"${item.replace(/[\\"]/g, '\\$&')}"`;
    });
    return client.escapeLiteral(`{${items.join(',')}}`);
  }
  throw new Error(`no literal for a parameter of type ${typeof value}`);
}

/** Thrown by the capturing pool with the write statement it kept from Postgres. */
class CapturedWrite extends Error {
  constructor(readonly query: pg.QueryConfig) {
    super(`captured ${query.name ?? 'a statement'}`);
  }
}

/**
 * A pool for the service's use cases that runs their reads on `db` and, instead of running their
 * write (the statement named `write…`), throws it back, bound as the use case bound it.
 */
function capturingPool(db: pg.ClientBase, writeName: RegExp): pg.Pool {
  const query = async (config: pg.QueryConfig) => {
    if (config.name && writeName.test(config.name)) throw new CapturedWrite(config);
    return db.query({ text: config.text, values: config.values });
  };
  return {
    query,
    connect: () => {
      throw new Error('the write plans capture only statements sent on the pool');
    },
  } as unknown as pg.Pool;
}

async function capture(db: pg.ClientBase, writeName: RegExp, useCase: (pool: pg.Pool) => Promise<unknown>): Promise<pg.QueryConfig> {
  try {
    await useCase(capturingPool(db, writeName));
  } catch (error) {
    if (error instanceof CapturedWrite) return error.query;
    throw error;
  }
  throw new Error(`the use case sent no statement named like ${writeName}`);
}

/** Runs of a prepared statement before its plan is shown: Postgres considers the generic plan from the sixth on. */
export const PLAN_SETTLING_RUNS = 6;

/**
 * The statement prepared once (as the service prepares it), run PLAN_SETTLING_RUNS times with the
 * first bindings so that Postgres settles on the plan it keeps, then EXPLAIN ANALYZEd with the last
 * one; every run in a transaction of its own, rolled back.
 */
async function explainRolledBack(db: pg.ClientBase, bindings: pg.QueryConfig[]): Promise<unknown> {
  const execute = (binding: pg.QueryConfig): string =>
    `EXECUTE bench_write${binding.values?.length ? `(${binding.values.map((value: unknown) => sqlLiteral(db, value)).join(', ')})` : ''}`;
  const inRolledBackTransaction = async <T>(run: () => Promise<T>): Promise<T> => {
    await db.query('BEGIN');
    try {
      return await run();
    } finally {
      await db.query('ROLLBACK');
    }
  };
  await db.query(`PREPARE bench_write AS ${bindings[0].text}`);
  try {
    for (const binding of bindings.slice(0, -1)) await inRolledBackTransaction(() => db.query(execute(binding)));
    const { rows } = await inRolledBackTransaction(() =>
      db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (ANALYZE, BUFFERS, WAL, FORMAT JSON) ${execute(bindings.at(-1)!)}`),
    );
    return rows[0]['QUERY PLAN'];
  } finally {
    await db.query('DEALLOCATE bench_write');
  }
}

/** What the writes could have left of the tasks they name: their rows and their dependants' counts. */
async function footprint(db: pg.ClientBase, taskIds: string[]): Promise<string> {
  const { rows } = await db.query(
    `SELECT i."id",
       (SELECT row_to_json(t) FROM (SELECT "state", "version", "message_count", "updated_at" FROM "tasks"."tasks" WHERE "id" = i."id") t) AS "task",
       (SELECT count(*) FROM "tasks"."messages" WHERE "task_id" = i."id")::int AS "messages",
       (SELECT count(*) FROM "tasks"."audit_log" WHERE "task_id" = i."id")::int AS "audit",
       (SELECT count(*) FROM "tasks"."outbox_events" WHERE "task_id" = i."id")::int AS "events",
       (SELECT count(*) FROM "tasks"."idempotency_keys" WHERE "task_id" = i."id")::int AS "keys",
       (SELECT count(*) FROM "tasks"."artifacts" WHERE "task_id" = i."id")::int AS "artifacts"
     FROM unnest($1::text[]) AS i("id") ORDER BY i."id"`,
    [taskIds],
  );
  return JSON.stringify(rows);
}

export interface WriteParties {
  sender: ParticipantRefDto;
  recipient: ParticipantRefDto;
}

/**
 * The plans of a create (sender to recipient), an append (the recipient's reply on `taskId`) and a
 * transition (the recipient's accept of `taskId`, which must be pending), each as the service binds
 * it, with a client message id as A2A clients send one. Throws if any row of the new tasks or of
 * `taskId` is left changed.
 */
export async function explainWrites(db: pg.ClientBase, { sender, recipient }: WriteParties, taskId: string): Promise<WritePlan[]> {
  const runs = PLAN_SETTLING_RUNS + 1;
  const text = (words: string) => [{ kind: 'text', text: words }] as SendRequest['message']['parts'];
  const bind = async (writeName: RegExp, useCase: (pool: pg.Pool, run: number) => Promise<unknown>): Promise<pg.QueryConfig[]> => {
    const bindings: pg.QueryConfig[] = [];
    for (let run = 0; run < runs; run++) bindings.push(await capture(db, writeName, (pool) => useCase(pool, run)));
    if (new Set(bindings.map((binding) => binding.name)).size !== 1)
      throw new Error(`the runs bound different statements: ${bindings.map((binding) => binding.name).join(', ')}`);
    return bindings;
  };
  // As a service binds a root create when it kept the pair's count: the statement then counts the pair too.
  const limits = { ...DEFAULT_CHAIN_LIMITS, pairPerMinute: 1_000_000 };
  const pairs = new RecentPairs();
  pairs.ended(sender.id, recipient.id, { took: false, before: limits.pairPerMinute - 2, created: false, moved: false }, Date.now());
  const creates = await bind(/^tasks-create-task$/, (pool, run) => {
    const request = { caller: sender, recipient, message: { message_id: randomUUID(), parts: text(`Please review handoff ${run}`) } } as SendRequest;
    return createTask(pool, request, idempotencyKeys(request), sendRequestHash(request), limits, undefined, undefined, pairs);
  });
  if (creates.some((binding) => binding.values?.at(-1) === null)) throw new Error("a create was bound without the pair's kept count");
  const appends = await bind(/^tasks-change-task-/, (pool, run) => {
    const request = { caller: recipient, task_id: taskId, message: { message_id: randomUUID(), parts: text(`On it, reply ${run}`) } } as SendRequest;
    return changeTask(
      pool,
      taskId,
      (current) => appendChange(current, request, sendRequestHash(request)),
      () => new RelayError('state_changed', 'the task changed while its append was explained'),
    );
  });
  const transitions = await bind(/^tasks-change-task-/, (pool) => {
    const request: TransitionRequest = { caller_id: recipient.id, task_id: taskId, transition: 'accept', history_length: 0 };
    return transitionTask(pool, request);
  });
  const touched = [taskId, ...creates.map((binding) => binding.values![0] as string)];
  const before = await footprint(db, touched);
  const plans: WritePlan[] = [];
  for (const [operation, bindings] of [
    ['create', creates],
    ['append', appends],
    ['transition', transitions],
  ] as const) {
    const plan = await explainRolledBack(db, bindings);
    plans.push({ ...summarizeWritePlan(operation, bindings[0].name!, plan), plan });
  }
  const after = await footprint(db, touched);
  if (after !== before) throw new Error(`the rolled-back writes left rows behind: before ${before}, after ${after}`);
  return plans;
}

/**
 * The bench's writes at one table size: explainWrites for the inbox pair on one of its pending
 * tasks, and the tasks table's count checked unchanged after.
 */
export async function explainRelayWrites(db: pg.ClientBase, pair: RelayPair, taskId: string): Promise<WritePlan[]> {
  const party = (agent: RelayAgent): ParticipantRefDto => ({ id: agent.id, handle: agent.handle, name: agent.handle.split('@')[0], role: null });
  const count = async (): Promise<number> => (await db.query<{ n: number }>(`SELECT count(*)::int AS "n" FROM "tasks"."tasks"`)).rows[0].n;
  const before = await count();
  const plans = await explainWrites(db, { sender: party(pair.sender), recipient: party(pair.recipient) }, taskId);
  const after = await count();
  if (after !== before) throw new Error(`the tasks table held ${before} tasks before the rolled-back writes and ${after} after`);
  return plans;
}
