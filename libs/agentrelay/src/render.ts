import { TASK_LIMITS, type ArtifactView, type MessageView, type PartView, type ThreadView } from '@app/contracts';

/** AgentRelay shapes of the neutral thread view (docs/dialects.md#agentrelay). */

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

function sender(thread: ThreadView): Record<string, unknown> {
  return { handle: thread.sender.handle, name: thread.sender.name, role: thread.sender.role };
}

/**
 * tasks/get: one page of messages, oldest first. `has_more_messages` tells that the thread was cut
 * to fit the reply, and `next_after_sequence_no` the `after_sequence_no` that reads the next page.
 */
export function renderThread(thread: ThreadView): Record<string, unknown> {
  const last = thread.messages[thread.messages.length - 1];
  const hasMore = last !== undefined && last.sequence_no < thread.message_count;
  return {
    thread_id: thread.id,
    task_id: thread.id,
    status: { state: thread.state },
    sender: sender(thread),
    recipient_id: thread.recipient.id,
    recipient: thread.recipient.handle,
    summary: thread.summary,
    intent: thread.intent,
    artifacts: thread.artifacts.map(renderRelayArtifact),
    proposed_action: thread.proposed_action,
    messages: thread.messages.map(renderRelayMessage),
    message_count: thread.message_count,
    has_more_messages: hasMore,
    next_after_sequence_no: hasMore ? last.sequence_no : null,
    result_summary: thread.result_summary,
    reason: thread.reason,
    accepted_at: thread.accepted_at,
    completed_at: thread.completed_at,
    cancelled_at: thread.cancelled_at,
    failed_at: thread.failed_at,
    rejected_at: thread.rejected_at,
    created_at: thread.created_at,
    updated_at: thread.updated_at,
  };
}

export function summaryPreview(summary: string): string {
  const limit = TASK_LIMITS.summaryPreviewChars;
  return summary.length <= limit ? summary : `${summary.slice(0, limit - 1)}…`;
}

/** An item of tasks/list. */
export function renderListItem(thread: ThreadView): Record<string, unknown> {
  return {
    thread_id: thread.id,
    task_id: thread.id,
    status: { state: thread.state },
    sender: sender(thread),
    summary_preview: summaryPreview(thread.summary),
    intent: thread.intent,
    unread_messages: thread.unread_messages,
    created_at: thread.created_at,
    updated_at: thread.updated_at,
  };
}

/** tasks/update */
export function renderTransition(thread: ThreadView): Record<string, unknown> {
  return {
    thread_id: thread.id,
    task_id: thread.id,
    status: { state: thread.state },
    accepted_at: thread.accepted_at,
    completed_at: thread.completed_at,
    cancelled_at: thread.cancelled_at,
    ...(thread.failed_at ? { failed_at: thread.failed_at } : {}),
    ...(thread.rejected_at ? { rejected_at: thread.rejected_at } : {}),
    updated_at: thread.updated_at,
  };
}
