import type {
  AdminTaskChain,
  AdminTaskDetail,
  AdminTaskPage,
  AdminTaskRow,
  ArtifactView,
  MessageView,
  PartView,
  TaskView,
  TimelineEntry,
  WithHiddenBodies,
} from '@app/contracts';

/**
 * What agents wrote, left out of the admin API's answers to a role that may not read it (the
 * `auditor`): message text, parts and metadata, summaries, reasons, proposed actions, artifacts'
 * content and descriptions, the task's metadata. What stays is who, when, what state, how many and
 * which artifacts (type and name): the metadata an audit needs.
 */
export const HIDDEN_TEXT = '';

/** A part's kind and file name survive; its content does not. */
function hidePart(part: PartView): PartView {
  if (part.kind === 'text') return { kind: 'text', text: HIDDEN_TEXT };
  if (part.kind === 'data') return { kind: 'data', data: null };
  return {
    kind: 'file',
    file: {
      ...(part.file.name !== undefined ? { name: part.file.name } : {}),
      ...(part.file.mime_type !== undefined ? { mime_type: part.file.mime_type } : {}),
    },
  };
}

export function hideMessage(message: MessageView): MessageView {
  return { ...message, body: HIDDEN_TEXT, parts: message.parts.map(hidePart), payload: {} };
}

export function hideArtifact(artifact: ArtifactView): ArtifactView {
  return { ...artifact, fields: {}, description: null, parts: artifact.parts.map(hidePart), metadata: {} };
}

export function hideTask(task: TaskView): TaskView {
  return {
    ...task,
    summary: HIDDEN_TEXT,
    result_summary: task.result_summary === null ? null : HIDDEN_TEXT,
    reason: task.reason === null ? null : HIDDEN_TEXT,
    proposed_action: null,
    metadata: {},
    messages: task.messages.map(hideMessage),
    artifacts: task.artifacts.map(hideArtifact),
  };
}

export function hideRow(row: AdminTaskRow): AdminTaskRow {
  return { ...row, summary: HIDDEN_TEXT };
}

function hideTimelineEntry(entry: TimelineEntry): TimelineEntry {
  return {
    ...entry,
    ...(entry.message ? { message: hideMessage(entry.message) } : {}),
    ...(entry.artifact ? { artifact: hideArtifact(entry.artifact) } : {}),
    ...(entry.reason !== undefined && entry.reason !== null ? { reason: HIDDEN_TEXT } : {}),
  };
}

export function hidePage(page: AdminTaskPage): WithHiddenBodies<AdminTaskPage> {
  return { ...page, items: page.items.map(hideRow), bodies_hidden: true };
}

export function hideDetail(detail: AdminTaskDetail): WithHiddenBodies<AdminTaskDetail> {
  return { ...detail, task: hideTask(detail.task), timeline: detail.timeline.map(hideTimelineEntry), bodies_hidden: true };
}

export function hideChain(chain: AdminTaskChain): WithHiddenBodies<AdminTaskChain> {
  return { ...chain, nodes: chain.nodes.map(hideRow), bodies_hidden: true };
}
