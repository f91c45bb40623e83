import type { ArtifactView, MessageRef, MessageView, PartView, TaskChain, TaskView } from '@app/contracts';
import type { ArtifactEntity } from './artifact.entity';
import type { MessageEntity } from './message.entity';
import type { TaskEntity } from './task.entity';

/** `senderHandle` → `sender_handle`: an entity property under the column name the naming strategy gives it. */
type SnakeCase<Name extends string> = Name extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : Name;

/**
 * A table's row as raw SQL returns it: its entity's columns under their snake_case names. The
 * entities are the one TypeScript description of the tables (the schema-drift test holds them to
 * the migrations); the row types and column lists here derive from them.
 */
export type RowOf<Entity> = { -readonly [Property in keyof Entity as Property extends string ? SnakeCase<Property> : never]-?: Entity[Property] };

/** The tally of stored bytes per party, which only the writes and retention deletes read (store/stored-bytes.ts). */
type StoredBytesColumns = 'senderStoredBytes' | 'recipientStoredBytes';

/** Those columns as the tasks table names them: no task row carries them. */
export const STORED_BYTES_TALLY_COLUMNS = ['sender_stored_bytes', 'recipient_stored_bytes'];

export type TaskRow = RowOf<Omit<TaskEntity, StoredBytesColumns>> & {
  /** Present on list queries. */
  unread_messages?: number | string;
  /** Microsecond text of status_timestamp (list cursors). */
  status_key?: string;
};

/** A message row; `size_bytes` as stored (absent on a row built before it is written). */
export type MessageRow = RowOf<Omit<MessageEntity, 'task' | 'sizeBytes'>> & { size_bytes?: number };

/** An artifact row as a task read carries it; `size_bytes` as stored (absent on a row built before it is written). */
export type ArtifactRow = RowOf<Omit<ArtifactEntity, 'task' | 'sizeBytes' | 'createdAt' | 'updatedAt'>> & { size_bytes?: number };

/** Every column of a task row: the compiler refuses a column missing from, or unknown to, the entity. */
const TASK_ROW_COLUMNS: { [Column in keyof RowOf<Omit<TaskEntity, StoredBytesColumns>>]: true } = {
  id: true,
  context_id: true,
  sender_id: true,
  sender_handle: true,
  sender_name: true,
  sender_role: true,
  recipient_id: true,
  recipient_handle: true,
  recipient_name: true,
  recipient_role: true,
  state: true,
  intent: true,
  summary: true,
  proposed_action: true,
  metadata: true,
  result_summary: true,
  reason: true,
  message_count: true,
  version: true,
  accepted_at: true,
  completed_at: true,
  cancelled_at: true,
  failed_at: true,
  rejected_at: true,
  created_at: true,
  updated_at: true,
  status_timestamp: true,
  hold: true,
  hold_expires_at: true,
  hidden_from_recipient: true,
  tool_prompts: true,
  parent_task_id: true,
  root_task_id: true,
  depth: true,
  trace_id: true,
  trace_span_id: true,
  root_sender_handle: true,
};

/** The task columns of a query on `"tasks"."tasks" t`. */
export const TASK_COLUMNS = Object.keys(TASK_ROW_COLUMNS)
  .map((column) => `t."${column}"`)
  .join(', ');

function iso(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

export function toMessageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    sequence_no: row.sequence_no,
    from: row.from_handle,
    author: row.author,
    body: row.body,
    parts: row.parts,
    payload: row.payload,
    created_at: row.created_at.toISOString(),
  };
}

export function toMessageRef(row: MessageRow): MessageRef {
  return { id: row.id, sequence_no: row.sequence_no, created_at: row.created_at.toISOString() };
}

export function toArtifactView(row: ArtifactRow): ArtifactView {
  return {
    artifact_id: row.artifact_id,
    type: row.type,
    fields: row.fields,
    name: row.name,
    description: row.description,
    parts: row.parts,
    metadata: row.metadata,
  };
}

export function toTaskView(row: TaskRow, messages: MessageRow[], artifacts: ArtifactRow[], unread: number): TaskView {
  return {
    id: row.id,
    context_id: row.context_id,
    state: row.state,
    intent: row.intent,
    summary: row.summary,
    sender: { id: row.sender_id, handle: row.sender_handle, name: row.sender_name, role: row.sender_role },
    recipient: { id: row.recipient_id, handle: row.recipient_handle, name: row.recipient_name, role: row.recipient_role },
    proposed_action: row.proposed_action,
    artifacts: artifacts.map(toArtifactView),
    messages: messages.map(toMessageView),
    message_count: row.message_count,
    unread_messages: unread,
    result_summary: row.result_summary,
    reason: row.reason,
    metadata: row.metadata,
    accepted_at: iso(row.accepted_at),
    completed_at: iso(row.completed_at),
    cancelled_at: iso(row.cancelled_at),
    failed_at: iso(row.failed_at),
    rejected_at: iso(row.rejected_at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    status_timestamp: row.status_timestamp.toISOString(),
    hold: row.hold ?? null,
    tool_prompts: row.tool_prompts ?? null,
    chain: toTaskChain(row),
  };
}

/** A task's place in its chain; a root (no root stored) is its own root. */
export function toTaskChain(row: Pick<TaskRow, 'id' | 'parent_task_id' | 'root_task_id' | 'depth'>): TaskChain {
  return { parent_task_id: row.parent_task_id, root_task_id: row.root_task_id ?? row.id, depth: row.depth };
}

/** The first text part of a message: its body, and a task's summary. */
export function firstText(parts: PartView[]): string {
  for (const part of parts) if (part.kind === 'text') return part.text;
  return '';
}
