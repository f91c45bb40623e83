import type { QueryRunner } from 'typeorm';
import { TASKS_MIGRATIONS } from '../../database/migrations';
import { STORED_BYTES_TALLY_COLUMNS, TASK_COLUMNS } from './task-rows';

/** The columns the tasks migrations give `"tasks"."tasks"` (first named threads), in the order they are added. */
async function migratedTaskColumns(): Promise<string[]> {
  const statements: string[] = [];
  const runner = { query: async (sql: string) => void statements.push(sql.replace(/\s+/g, ' ')) } as unknown as QueryRunner;
  for (const Migration of TASKS_MIGRATIONS) await (new Migration() as { up(runner: QueryRunner): Promise<void> }).up(runner);
  const columns: string[] = [];
  for (const sql of statements) {
    const create = sql.match(/CREATE TABLE "tasks"\."(?:threads|tasks)" \((.*)\)\s*$/)?.[1];
    if (create) columns.push(...[...create.matchAll(/(?:^\s*|, )"([a-z_]+)" [a-z]/g)].map((match) => match[1]));
    for (const added of sql.matchAll(/ALTER TABLE "tasks"\."(?:threads|tasks)" ADD (?:COLUMN )?"([a-z_]+)"/g)) columns.push(added[1]);
    for (const dropped of sql.matchAll(/ALTER TABLE "tasks"\."(?:threads|tasks)" DROP COLUMN "([a-z_]+)"/g)) columns.splice(columns.indexOf(dropped[1]), 1);
  }
  return columns;
}

describe('TASK_COLUMNS', () => {
  it('names every column of the migrated tasks table but the stored-bytes tallies, and no other', async () => {
    const selected = [...TASK_COLUMNS.matchAll(/t\."([a-z_]+)"/g)].map((match) => match[1]);
    const migrated = await migratedTaskColumns();
    expect(migrated).toEqual(expect.arrayContaining(STORED_BYTES_TALLY_COLUMNS));
    expect(selected.sort()).toEqual(migrated.filter((column) => !STORED_BYTES_TALLY_COLUMNS.includes(column)).sort());
  });
});
