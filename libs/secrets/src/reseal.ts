import { SecretCipher, SecretDecryptionError } from './secret-cipher';

/** The one method of a TypeORM DataSource or EntityManager that resealing needs. */
export interface SqlRunner {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * A column holding secrets: `text` columns hold one value, `json-values` columns a JSON object
 * whose string values are each sealed (e.g. request headers).
 */
export interface SealedColumn {
  /** Schema-qualified and quoted, e.g. `"tasks"."push_configs"`. */
  table: string;
  keyColumns: string[];
  column: string;
  kind: 'text' | 'json-values';
  /** The column holds secrets sealed beside values that are none, in clear: only sealed values are re-sealed. */
  onlySealed?: boolean;
}

export interface ResealResult {
  table: string;
  column: string;
  resealed: number;
  /** Values sealed with a key RELAY_SECRET_KEYS no longer lists (or altered): left as they are. */
  unreadable: number;
}

const BATCH_ROWS = 500;

function quoted(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** TypeORM answers an UPDATE on Postgres with `[rows, affectedCount]`. */
function affectedRows(result: unknown): number {
  return Array.isArray(result) && typeof result[1] === 'number' ? result[1] : 0;
}

/** Seals every string value of a JSON object with the first key; null when nothing changes. */
export function resealJsonValues(cipher: SecretCipher, values: Record<string, unknown>): Record<string, unknown> | null {
  let changed = false;
  const resealed: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) {
    if (typeof value === 'string' && !cipher.isCurrent(value)) {
      resealed[name] = cipher.reseal(value);
      changed = true;
    } else {
      resealed[name] = value;
    }
  }
  return changed ? resealed : null;
}

/** Seals every value of a JSON object of strings (e.g. request headers carrying credentials). */
export function sealJsonValues(cipher: SecretCipher, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, cipher.seal(value)]));
}

/** Opens every string value of a JSON object sealed by `resealJsonValues` (or stored before sealing). */
export function openJsonValues(cipher: SecretCipher, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, cipher.open(value)]));
}

/**
 * Re-seals, with the first key of the cipher, every value of the column that is in clear (stored
 * before encryption) or sealed with another key. Walks the table in key order in small batches;
 * each row is updated only if it still holds the value read, so it is safe beside live writers
 * and other replicas doing the same.
 */
export async function resealColumn(db: SqlRunner, cipher: SecretCipher, target: SealedColumn): Promise<ResealResult> {
  const result: ResealResult = { table: target.table, column: target.column, resealed: 0, unreadable: 0 };
  const keys = target.keyColumns.map(quoted);
  const column = quoted(target.column);
  const currentPrefix = `v1:${cipher.primaryKeyId}:`;
  const stale =
    target.kind === 'text'
      ? `${column} IS NOT NULL AND left(${column}, ${currentPrefix.length}) <> '${currentPrefix}'${target.onlySealed ? ` AND left(${column}, 3) = 'v1:'` : ''}`
      : `${column} IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_each(${column}) AS entry WHERE jsonb_typeof(entry.value) = 'string' AND left(entry.value #>> '{}', ${currentPrefix.length}) <> '${currentPrefix}')`;
  let after: unknown[] | null = null;
  for (;;) {
    const position = after ? `AND (${keys.join(', ')}) > (${keys.map((_, index) => `$${index + 1}`).join(', ')})` : '';
    const rows = (await db.query(
      `SELECT ${keys.join(', ')}, ${column} AS "value" FROM ${target.table} WHERE ${stale} ${position} ORDER BY ${keys.join(', ')} LIMIT ${BATCH_ROWS}`,
      after ?? [],
    )) as Array<Record<string, unknown>>;
    if (rows.length === 0) return result;
    for (const row of rows) {
      const keyValues = target.keyColumns.map((name) => row[name]);
      let next: string | null;
      try {
        next =
          target.kind === 'text'
            ? cipher.reseal(row.value as string)
            : ((value) => (value ? JSON.stringify(value) : null))(resealJsonValues(cipher, row.value as Record<string, unknown>));
      } catch (error) {
        if (!(error instanceof SecretDecryptionError)) throw error;
        result.unreadable++;
        continue;
      }
      if (next === null) continue;
      const where = keys.map((key, index) => `${key} = $${index + 3}`).join(' AND ');
      const previous = target.kind === 'text' ? row.value : JSON.stringify(row.value);
      const matches = target.kind === 'text' ? `${column} = $2` : `${column} = $2::jsonb`;
      const updated = await db.query(`UPDATE ${target.table} SET ${column} = $1 WHERE ${matches} AND ${where}`, [next, previous, ...keyValues]);
      result.resealed += affectedRows(updated);
    }
    const last = rows[rows.length - 1];
    after = target.keyColumns.map((name) => last[name]);
  }
}

export async function resealColumns(db: SqlRunner, cipher: SecretCipher, targets: SealedColumn[]): Promise<ResealResult[]> {
  const results: ResealResult[] = [];
  for (const target of targets) results.push(await resealColumn(db, cipher, target));
  return results;
}
