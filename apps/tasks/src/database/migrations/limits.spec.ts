import type { QueryRunner } from 'typeorm';
import { AGENT_LIMITS, PUSH_CONFIG_LIMITS, TASK_LIMITS } from '@app/contracts';
import { TASKS_MIGRATIONS } from './index';

/** The SQL of every migration of the tasks schema, oldest first, as `up` runs it. */
async function migrationSql(): Promise<string> {
  const statements: string[] = [];
  const runner = { query: async (sql: string) => void statements.push(sql) } as unknown as QueryRunner;
  for (const Migration of TASKS_MIGRATIONS) await (new Migration() as { up(runner: QueryRunner): Promise<void> }).up(runner);
  return statements.join('\n').replace(/\s+/g, ' ');
}

/** The declared type of a column in its CREATE TABLE statement. */
function columnType(sql: string, table: string, column: string): string {
  const create = sql.match(new RegExp(`CREATE TABLE "tasks"\\."${table}" \\((.*?)\\) ?(?:CREATE|ALTER|$)`))?.[1] ?? '';
  return create.match(new RegExp(`"${column}" ([a-z]+(?:\\(\\d+\\))?)`))?.[1] ?? `no column ${table}.${column}`;
}

function constraint(sql: string, name: string): string {
  return sql.match(new RegExp(`CONSTRAINT "${name}" CHECK \\((.*?)\\)(?:,|\\s\\))`))?.[1] ?? `no constraint ${name}`;
}

describe('tasks migrations', () => {
  let sql: string;
  beforeAll(async () => {
    sql = await migrationSql();
  });

  it('bound messages per task as TASK_LIMITS.messagesPerTask', () => {
    expect(constraint(sql, 'threads_message_count_range')).toBe(`"message_count" BETWEEN 0 AND ${TASK_LIMITS.messagesPerTask}`);
    expect(constraint(sql, 'messages_sequence_range')).toBe(`"sequence_no" BETWEEN 1 AND ${TASK_LIMITS.messagesPerTask}`);
    expect(constraint(sql, 'read_cursors_sequence_range')).toBe(`"last_read_sequence_no" BETWEEN 0 AND ${TASK_LIMITS.messagesPerTask}`);
  });

  it('bound message ids and idempotency keys as the contract does', () => {
    expect(constraint(sql, 'messages_id_length')).toBe(`char_length("id") BETWEEN 1 AND ${TASK_LIMITS.messageIdChars}`);
    expect(columnType(sql, 'messages', 'id')).toBe(`varchar(${TASK_LIMITS.messageIdChars})`);
    // A message id is kept as an idempotency key too, beside the client's own key.
    expect(TASK_LIMITS.idempotencyKeyChars).toBe(TASK_LIMITS.messageIdChars);
    expect(constraint(sql, 'idempotency_keys_key_length')).toBe(`char_length("key") BETWEEN 1 AND ${TASK_LIMITS.idempotencyKeyChars}`);
    expect(columnType(sql, 'idempotency_keys', 'key')).toBe(`varchar(${TASK_LIMITS.idempotencyKeyChars})`);
  });

  it('size the columns of threads, artifacts and the audit log to the contract limits', () => {
    expect(columnType(sql, 'threads', 'context_id')).toBe(`varchar(${TASK_LIMITS.contextIdChars})`);
    for (const side of ['sender', 'recipient']) {
      expect(columnType(sql, 'threads', `${side}_id`)).toBe(`varchar(${AGENT_LIMITS.idChars})`);
      expect(columnType(sql, 'threads', `${side}_handle`)).toBe(`varchar(${AGENT_LIMITS.handleChars})`);
      expect(columnType(sql, 'threads', `${side}_name`)).toBe(`varchar(${AGENT_LIMITS.nameChars})`);
      expect(columnType(sql, 'threads', `${side}_role`)).toBe(`varchar(${AGENT_LIMITS.roleChars})`);
    }
    expect(columnType(sql, 'artifacts', 'artifact_id')).toBe(`varchar(${TASK_LIMITS.artifactIdChars})`);
    expect(columnType(sql, 'artifacts', 'name')).toBe(`varchar(${TASK_LIMITS.artifactNameChars})`);
    expect(columnType(sql, 'audit_log', 'session_id')).toBe(`varchar(${TASK_LIMITS.sessionIdChars})`);
  });

  it('size push configs to PUSH_CONFIG_LIMITS', () => {
    expect(columnType(sql, 'push_configs', 'id')).toBe(`varchar(${PUSH_CONFIG_LIMITS.configIdChars})`);
    expect(columnType(sql, 'push_configs', 'url')).toBe(`varchar(${PUSH_CONFIG_LIMITS.urlChars})`);
    expect(columnType(sql, 'push_configs', 'token')).toBe(`varchar(${PUSH_CONFIG_LIMITS.tokenChars})`);
    expect(columnType(sql, 'push_configs', 'auth_credentials')).toBe(`varchar(${PUSH_CONFIG_LIMITS.credentialsChars})`);
  });
});
