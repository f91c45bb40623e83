import { TASK_LIMITS, type ArtifactView, type MessageView, type PartView, type TaskView } from '@app/contracts';

/** AgentRelay shapes of the neutral task view (docs/dialects.md#agentrelay). */

function renderRelayPart(part: PartView): Record<string, unknown> {
  switch (part.kind) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'data':
      return { type: 'data', data: part.data };
    case 'file':
      return { type: 'file', file: part.file };
  }
}

/** A typed artifact is `{type, ...fields}`; a standard A2A artifact keeps its id, name and parts. */
export function renderRelayArtifact(artifact: ArtifactView): Record<string, unknown> {
  if (artifact.type !== null) return { type: artifact.type, ...artifact.fields };
  return {
    type: null,
    artifact_id: artifact.artifact_id,
    name: artifact.name,
    description: artifact.description,
    parts: artifact.parts.map(renderRelayPart),
    metadata: artifact.metadata,
  };
}

export function renderRelayMessage(message: MessageView): Record<string, unknown> {
  return {
    id: message.id,
    sequence_no: message.sequence_no,
    from: message.from,
    body: message.body,
    payload: message.payload,
    created_at: message.created_at,
  };
}

/** A held handoff's hold as the sender reads it (docs/decisions/0024-held-handoffs.md): the rule, the reason, the deadline, how it ended. */
export function renderRelayHold(task: TaskView): Record<string, unknown> {
  return task.hold ? { hold: task.hold } : {};
}

function sender(task: TaskView): Record<string, unknown> {
  return { handle: task.sender.handle, name: task.sender.name, role: task.sender.role };
}

/**
 * tasks/get: one page of messages, oldest first. `has_more_messages` tells that the task was cut
 * to fit the reply, and `next_after_sequence_no` the `after_sequence_no` that reads the next page.
 */
export function renderRelayTask(task: TaskView): Record<string, unknown> {
  const last = task.messages[task.messages.length - 1];
  const hasMore = last !== undefined && last.sequence_no < task.message_count;
  return {
    thread_id: task.id,
    task_id: task.id,
    status: { state: task.state },
    sender: sender(task),
    recipient_id: task.recipient.id,
    recipient: task.recipient.handle,
    summary: task.summary,
    intent: task.intent,
    artifacts: task.artifacts.map(renderRelayArtifact),
    proposed_action: task.proposed_action,
    messages: task.messages.map(renderRelayMessage),
    message_count: task.message_count,
    has_more_messages: hasMore,
    next_after_sequence_no: hasMore ? last.sequence_no : null,
    result_summary: task.result_summary,
    reason: task.reason,
    accepted_at: task.accepted_at,
    completed_at: task.completed_at,
    cancelled_at: task.cancelled_at,
    failed_at: task.failed_at,
    rejected_at: task.rejected_at,
    created_at: task.created_at,
    updated_at: task.updated_at,
    chain: task.chain,
    ...renderRelayHold(task),
  };
}

export function summaryPreview(summary: string): string {
  const limit = TASK_LIMITS.summaryPreviewChars;
  return summary.length <= limit ? summary : `${summary.slice(0, limit - 1)}…`;
}

/** An item of tasks/list. */
export function renderListItem(task: TaskView): Record<string, unknown> {
  return {
    thread_id: task.id,
    task_id: task.id,
    status: { state: task.state },
    sender: sender(task),
    recipient: task.recipient.handle,
    summary_preview: summaryPreview(task.summary),
    intent: task.intent,
    unread_messages: task.unread_messages,
    created_at: task.created_at,
    updated_at: task.updated_at,
    ...renderRelayHold(task),
  };
}

/** tasks/update */
export function renderTransition(task: TaskView): Record<string, unknown> {
  return {
    thread_id: task.id,
    task_id: task.id,
    status: { state: task.state },
    accepted_at: task.accepted_at,
    completed_at: task.completed_at,
    cancelled_at: task.cancelled_at,
    ...(task.failed_at ? { failed_at: task.failed_at } : {}),
    ...(task.rejected_at ? { rejected_at: task.rejected_at } : {}),
    updated_at: task.updated_at,
  };
}
