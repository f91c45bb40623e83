import type { ArtifactView, Intent, MessageRef, MessageView, PartView, ProposedAction, TaskState, TaskView } from '@app/contracts';

export interface TaskRow {
  id: string;
  context_id: string;
  sender_id: string;
  sender_handle: string;
  sender_name: string;
  sender_role: string | null;
  recipient_id: string;
  recipient_handle: string;
  recipient_name: string;
  recipient_role: string | null;
  state: TaskState;
  intent: Intent;
  summary: string;
  proposed_action: ProposedAction | null;
  metadata: Record<string, unknown>;
  result_summary: string | null;
  reason: string | null;
  message_count: number;
  version: number;
  accepted_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  failed_at: Date | null;
  rejected_at: Date | null;
  created_at: Date;
  updated_at: Date;
  status_timestamp: Date;
  /** Present on list queries. */
  unread_messages?: number | string;
  /** Microsecond text of status_timestamp (list cursors). */
  status_key?: string;
}

export interface MessageRow {
  task_id: string;
  sequence_no: number;
  id: string;
  author: 'sender' | 'recipient';
  author_id: string;
  from_handle: string;
  body: string;
  parts: PartView[];
  payload: Record<string, unknown>;
  created_at: Date;
}

export interface ArtifactRow {
  task_id: string;
  artifact_id: string;
  position: number;
  type: ArtifactView['type'];
  fields: Record<string, unknown>;
  name: string | null;
  description: string | null;
  parts: PartView[];
  metadata: Record<string, unknown>;
  last_chunk: boolean;
  /** As stored (absent on a row built before it is written). */
  size_bytes?: number;
}

export const TASK_COLUMNS = `t."id", t."context_id", t."sender_id", t."sender_handle", t."sender_name", t."sender_role",
  t."recipient_id", t."recipient_handle", t."recipient_name", t."recipient_role", t."state", t."intent", t."summary",
  t."proposed_action", t."metadata", t."result_summary", t."reason", t."message_count", t."version", t."accepted_at",
  t."completed_at", t."cancelled_at", t."failed_at", t."rejected_at", t."created_at", t."updated_at", t."status_timestamp"`;

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
  };
}

/** The first text part of a message: its body, and a task's summary. */
export function firstText(parts: PartView[]): string {
  for (const part of parts) if (part.kind === 'text') return part.text;
  return '';
}
