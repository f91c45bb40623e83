import type pg from 'pg';
import { decideStoredBytes, type RelayError, type StoredBytesRefusal } from '@app/contracts';

/**
 * The bytes an org's agents keep stored in handoffs (docs/orgs.md#quotas). Every write counts
 * what it adds or frees (the `size_bytes` of the messages and artifacts it stores) to the org of
 * the agent whose call wrote it, in the task's tally of its party and in the org's counter, in the
 * write's own statement; a retention delete takes the deleted tasks' tallies off. An org's quota
 * is checked only when it has one: its writes that add bytes are then serialized on the org's
 * lock, in a transaction that reads the org's counter, so two writes cannot both take the last
 * bytes. Writes of an org without a quota take no lock and read nothing.
 */

/** How many rows an org's counter is spread over: a write adds to its task's, so the writes of one org to different tasks seldom wait on one row. */
export const ORG_STORED_BYTES_SHARDS = 16;

/** The shard of the org's counter a task's writes add to. */
export function storedBytesShard(taskId: string): number {
  let hash = 0;
  for (let index = 0; index < taskId.length; index++) hash = (hash * 31 + taskId.charCodeAt(index)) >>> 0;
  return hash % ORG_STORED_BYTES_SHARDS;
}

/** An org's stored-bytes quota as the directory has it, and how a refusal is told. */
export interface StoredBytesQuotas {
  /** The org's quota in bytes; null: none. */
  limitOf(org: string): Promise<number | null>;
  /** The error a refused write answers (counted in the org quota metric). */
  refused(refusal: StoredBytesRefusal): RelayError;
}

/** What one write stores, and for whose org. */
export interface StoredBytesCharge {
  org: string;
  /** Bytes added (negative: freed). */
  bytes: number;
  /** The org's quota; null: none, nothing is checked. */
  limit: number | null;
}

const LOCK_ORG_SQL = `SELECT pg_advisory_xact_lock(hashtext('tasks.org-stored-bytes:' || $1))`;
const ORG_STORED_SQL = `SELECT COALESCE(sum("bytes"), 0)::text AS "bytes" FROM "tasks"."org_stored_bytes" WHERE "org" = $1`;

/** In the caller's transaction: takes the org's lock, to its end (taken again by the same transaction, it is already held). */
export async function lockOrgStoredBytes(client: pg.PoolClient, org: string): Promise<void> {
  await client.query({ name: 'tasks-lock-org-stored-bytes', text: LOCK_ORG_SQL, values: [org] });
}

/**
 * In the caller's transaction: takes the org's lock (to its end) and refuses the write when it
 * would take the org past its quota. The counter is read after the lock is granted, so it holds
 * every earlier write of the org that checked.
 */
export async function checkStoredBytes(client: pg.PoolClient, charge: StoredBytesCharge, quotas: StoredBytesQuotas): Promise<void> {
  await lockOrgStoredBytes(client, charge.org);
  const { rows } = await client.query<{ bytes: string }>({ name: 'tasks-org-stored-bytes', text: ORG_STORED_SQL, values: [charge.org] });
  const refusal = decideStoredBytes(charge.org, charge.limit, Number(rows[0].bytes), charge.bytes);
  if (refusal) throw quotas.refused(refusal);
}

/** Whether a write must check its org's quota: it adds bytes, and the org has a quota. */
export function checksStoredBytes(charge: StoredBytesCharge): boolean {
  return charge.limit !== null && charge.bytes > 0;
}

/** The charge of a write of `bytes` by an agent of `org`: the quota is looked up only for a write that adds bytes. */
export async function storedBytesCharge(quotas: StoredBytesQuotas | undefined, org: string, bytes: number): Promise<StoredBytesCharge> {
  return { org, bytes, limit: quotas && bytes > 0 ? await quotas.limitOf(org) : null };
}

/** The statement part that adds a write's bytes to its org's counter (`$org`, `$shard`, `$bytes` as the statement names them), when `source` has a row. */
export function addStoredBytesSql(org: string, shard: string, bytes: string, source: string): string {
  return `INSERT INTO "tasks"."org_stored_bytes" ("org", "shard", "bytes") SELECT ${org}, ${shard}, ${bytes} FROM ${source}
  ON CONFLICT ("org", "shard") DO UPDATE SET "bytes" = "tasks"."org_stored_bytes"."bytes" + EXCLUDED."bytes"`;
}
