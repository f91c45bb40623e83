import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The names that change, each as [old, new]. Renaming keeps every row, index and constraint. */
const TABLE = ['threads', 'tasks'] as const;
const THREAD_ID_COLUMNS = ['messages', 'artifacts', 'idempotency_keys', 'read_cursors', 'audit_log'] as const;
const CONSTRAINTS: ReadonlyArray<readonly [table: string, from: string, to: string]> = [
  ['tasks', 'threads_pkey', 'tasks_pkey'],
  ['tasks', 'threads_id_ulid', 'tasks_id_ulid'],
  ['tasks', 'threads_state_known', 'tasks_state_known'],
  ['tasks', 'threads_intent_known', 'tasks_intent_known'],
  ['tasks', 'threads_proposed_action_matches_intent', 'tasks_proposed_action_matches_intent'],
  ['tasks', 'threads_metadata_object', 'tasks_metadata_object'],
  ['tasks', 'threads_message_count_range', 'tasks_message_count_range'],
  ['tasks', 'threads_version_positive', 'tasks_version_positive'],
  ['tasks', 'threads_accepted_at_when_accepted', 'tasks_accepted_at_when_accepted'],
  ['tasks', 'threads_completed_at_when_completed', 'tasks_completed_at_when_completed'],
  ['tasks', 'threads_failed_at_when_failed', 'tasks_failed_at_when_failed'],
  ['tasks', 'threads_rejected_at_when_rejected', 'tasks_rejected_at_when_rejected'],
  ['tasks', 'threads_cancelled_at_when_cancelled', 'tasks_cancelled_at_when_cancelled'],
  ['messages', 'messages_thread_id_id_key', 'messages_task_id_id_key'],
  ['messages', 'messages_thread_fkey', 'messages_task_fkey'],
  ['artifacts', 'artifacts_thread_position_key', 'artifacts_task_position_key'],
  ['artifacts', 'artifacts_thread_fkey', 'artifacts_task_fkey'],
  ['read_cursors', 'read_cursors_thread_fkey', 'read_cursors_task_fkey'],
  ['audit_log', 'audit_log_thread_fkey', 'audit_log_task_fkey'],
  ['push_configs', 'push_configs_thread_fkey', 'push_configs_task_fkey'],
];
const INDEXES: ReadonlyArray<readonly [from: string, to: string]> = [
  ['threads_context_idx', 'tasks_context_idx'],
  ['threads_sender_created_idx', 'tasks_sender_created_idx'],
  ['threads_sender_status_idx', 'tasks_sender_status_idx'],
  ['threads_recipient_created_idx', 'tasks_recipient_created_idx'],
  ['threads_recipient_status_idx', 'tasks_recipient_status_idx'],
  ['audit_log_thread_idx', 'audit_log_task_idx'],
];

/**
 * One name for the unit of work (docs/glossary.md): the `threads` table becomes `tasks`, its
 * `thread_id` references become `task_id`, and constraints and indexes follow. Only names change.
 */
export class OneNameForTasks1764550000000 implements MigrationInterface {
  name = 'OneNameForTasks1764550000000';

  async up(runner: QueryRunner): Promise<void> {
    await this.rename(runner, 'forward');
  }

  async down(runner: QueryRunner): Promise<void> {
    await this.rename(runner, 'back');
  }

  private async rename(runner: QueryRunner, direction: 'forward' | 'back'): Promise<void> {
    const pick = <T>(from: T, to: T): [T, T] => (direction === 'forward' ? [from, to] : [to, from]);
    const [tableFrom, tableTo] = pick(TABLE[0], TABLE[1]);
    const [columnFrom, columnTo] = pick('thread_id', 'task_id');
    const [createdFrom, createdTo] = pick('created_thread', 'created_task');
    await runner.query(`ALTER TABLE "tasks"."${tableFrom}" RENAME TO "${tableTo}"`);
    for (const table of THREAD_ID_COLUMNS) await runner.query(`ALTER TABLE "tasks"."${table}" RENAME COLUMN "${columnFrom}" TO "${columnTo}"`);
    await runner.query(`ALTER TABLE "tasks"."idempotency_keys" RENAME COLUMN "${createdFrom}" TO "${createdTo}"`);
    for (const [table, from, to] of CONSTRAINTS) {
      const [name, renamed] = pick(from, to);
      const owner = table === 'tasks' ? tableTo : table;
      await runner.query(`ALTER TABLE "tasks"."${owner}" RENAME CONSTRAINT "${name}" TO "${renamed}"`);
    }
    for (const [from, to] of INDEXES) {
      const [name, renamed] = pick(from, to);
      await runner.query(`ALTER INDEX "tasks"."${name}" RENAME TO "${renamed}"`);
    }
  }
}
