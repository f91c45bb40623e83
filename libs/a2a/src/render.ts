import type { ArtifactView, MessageView, PartView, ProposedAction, TaskHold, TaskToolPrompts, TaskView, WireVersion } from '@app/contracts';
import { toWireRole, toWireState } from './mapping';

export type Json = Record<string, unknown>;

/** What an A2A rendering of a task reads of it. */
export type TaskRendering = Pick<
  TaskView,
  | 'id'
  | 'context_id'
  | 'state'
  | 'status_timestamp'
  | 'hold'
  | 'messages'
  | 'artifacts'
  | 'metadata'
  | 'intent'
  | 'proposed_action'
  | 'sender'
  | 'recipient'
  | 'tool_prompts'
  | 'chain'
>;

/** Default aggregate size of the histories on one ListTasks page: 4 MiB (docs/operations.md#limits). */
export const LIST_HISTORY_BUDGET_BYTES = 4 * 1024 * 1024;

export interface RenderTaskOptions {
  /** undefined: every message the view holds; 0: no history; N: the N most recent. */
  historyLength?: number;
  /** false leaves `artifacts` out entirely (ListTasks default). */
  includeArtifacts?: boolean;
  /** Flags a task whose history was dropped to stay inside a page's history budget. */
  historyTruncated?: boolean;
  /** Flags a task whose history is only its most recent part (too large to send whole); the part is kept. */
  historyCut?: boolean;
}

function withMetadata(target: Json, metadata: Record<string, unknown> | undefined): Json {
  if (metadata && Object.keys(metadata).length > 0) target.metadata = metadata;
  return target;
}

export function renderPart(part: PartView, version: WireVersion): Json {
  if (version === '0.3') {
    switch (part.kind) {
      case 'text':
        return withMetadata({ kind: 'text', text: part.text }, part.metadata);
      case 'data':
        return withMetadata({ kind: 'data', data: part.data }, part.metadata);
      case 'file': {
        const file: Json = {};
        if (part.file.name !== undefined) file.name = part.file.name;
        if (part.file.mime_type !== undefined) file.mimeType = part.file.mime_type;
        if (part.file.bytes !== undefined) file.bytes = part.file.bytes;
        else if (part.file.uri !== undefined) file.uri = part.file.uri;
        return withMetadata({ kind: 'file', file }, part.metadata);
      }
    }
  }
  const described = (rendered: Json, source: { media_type?: string; filename?: string }): Json => {
    if (source.filename !== undefined) rendered.filename = source.filename;
    if (source.media_type !== undefined) rendered.mediaType = source.media_type;
    return rendered;
  };
  switch (part.kind) {
    case 'text':
      return withMetadata(described({ text: part.text }, part), part.metadata);
    case 'data':
      return withMetadata(described({ data: part.data }, part), part.metadata);
    case 'file': {
      const rendered: Json = part.file.bytes !== undefined ? { raw: part.file.bytes } : { url: part.file.uri };
      if (part.file.name !== undefined) rendered.filename = part.file.name;
      if (part.file.mime_type !== undefined) rendered.mediaType = part.file.mime_type;
      return withMetadata(rendered, part.metadata);
    }
  }
}

/** A task message as an A2A Message: body as the first text part, payload as metadata. */
export function renderMessage(message: MessageView, task: Pick<TaskView, 'id' | 'context_id'>, version: WireVersion): Json {
  const parts: PartView[] = message.parts.length > 0 ? message.parts : [{ kind: 'text', text: message.body }];
  const rendered: Json = {
    ...(version === '0.3' ? { kind: 'message' } : {}),
    messageId: message.id,
    contextId: task.context_id,
    taskId: task.id,
    role: toWireRole(message.author, version),
    parts: parts.map((part) => renderPart(part, version)),
  };
  return withMetadata(rendered, message.payload);
}

/**
 * An artifact as an A2A Artifact: standard artifacts exactly as they were given; the AgentRelay
 * typed artifacts (file_diff, link, …) as one data part holding `{type, ...fields}`.
 */
export function renderArtifact(artifact: ArtifactView, version: WireVersion): Json {
  const rendered: Json = { artifactId: artifact.artifact_id };
  const name = artifact.name ?? artifact.type;
  if (name !== null) rendered.name = name;
  if (artifact.description !== null) rendered.description = artifact.description;
  const parts: PartView[] =
    artifact.type !== null && artifact.parts.length === 0 ? [{ kind: 'data', data: { type: artifact.type, ...artifact.fields } }] : artifact.parts;
  rendered.parts = parts.map((part) => renderPart(part, version));
  return withMetadata(rendered, artifact.metadata);
}

/** A proposed action in A2A's camelCase (A2A renderings carry no snake_case key). */
function renderProposedAction(action: ProposedAction | null): Json | null {
  if (action === null) return null;
  return {
    description: action.description,
    targetFiles: action.target_files,
    rationale: action.rationale,
    ...(action.suggested_diff !== undefined && action.suggested_diff !== null ? { suggestedDiff: action.suggested_diff } : {}),
  };
}

/** The `relay` member of a task's metadata: what a vanilla A2A client cannot see otherwise. */
function relayMetadata(task: TaskRendering, historyTruncated: boolean): Json {
  return {
    intent: task.intent,
    proposedAction: renderProposedAction(task.proposed_action),
    sender: task.sender.handle,
    recipient: task.recipient.handle,
    ...(task.tool_prompts ? { toolPrompts: renderToolPrompts(task.tool_prompts) } : {}),
    chain: { parentTaskId: task.chain.parent_task_id, rootTaskId: task.chain.root_task_id, depth: task.chain.depth },
    ...(historyTruncated ? { historyTruncated: true } : {}),
  };
}

/**
 * Who answers the task's tool prompts when people do, and their answers (docs/decisions/0031-tool-prompts-answered-by-people.md):
 * under `metadata.relay`, which the relay writes and no agent can, so a worker may trust it.
 */
function renderToolPrompts(toolPrompts: TaskToolPrompts): Json {
  return {
    answeredBy: toolPrompts.answered_by,
    rule: toolPrompts.rule,
    answers: toolPrompts.answers.map((answer) => ({
      requestId: answer.request_id,
      decision: answer.decision,
      reason: answer.reason,
      answeredBy: answer.answered_by,
      answeredAt: answer.answered_at,
    })),
  };
}

function selectHistory(messages: MessageView[], historyLength: number | undefined): MessageView[] | undefined {
  if (historyLength === 0) return undefined;
  if (historyLength === undefined || historyLength >= messages.length) return messages;
  return messages.slice(messages.length - historyLength);
}

/**
 * The status message of a held task (A2A `auth-required`): from the relay (role agent), its text
 * the reason, its metadata `agentrelay.hold` naming the rule and when it expires.
 */
export function renderHoldMessage(task: Pick<TaskView, 'id' | 'context_id'>, hold: TaskHold, version: WireVersion): Json {
  return {
    ...(version === '0.3' ? { kind: 'message' } : {}),
    messageId: `hold-${task.id}`,
    contextId: task.context_id,
    taskId: task.id,
    role: toWireRole('recipient', version),
    parts: [renderPart({ kind: 'text', text: hold.reason }, version)],
    metadata: { agentrelay: { hold: { rule: hold.rule, expires_at: hold.expires_at } } },
  };
}

/** A task as an A2A Task of the given wire version (not wrapped). */
export function renderTask(task: TaskRendering, version: WireVersion, options: RenderTaskOptions = {}): Json {
  const latest = task.messages.at(-1);
  const status: Json = { state: toWireState(task.state, version), timestamp: task.status_timestamp };
  if (task.state === 'held' && task.hold) status.message = renderHoldMessage(task, task.hold, version);
  else if (latest) status.message = renderMessage(latest, task, version);
  const rendered: Json = {
    ...(version === '0.3' ? { kind: 'task' } : {}),
    id: task.id,
    contextId: task.context_id,
    status,
  };
  const history = options.historyTruncated ? undefined : selectHistory(task.messages, options.historyLength);
  if (history !== undefined) rendered.history = history.map((message) => renderMessage(message, task, version));
  if (options.includeArtifacts !== false && task.artifacts.length > 0) rendered.artifacts = task.artifacts.map((artifact) => renderArtifact(artifact, version));
  rendered.metadata = {
    ...task.metadata,
    relay: relayMetadata(task, options.historyTruncated === true || (options.historyCut === true && history !== undefined)),
  };
  return rendered;
}

/** The result of message/send / SendMessage: a bare v0.3 Task, or v1.0 `{task}`. */
export function renderSendResult(task: TaskRendering, version: WireVersion, options: RenderTaskOptions = {}): Json {
  const rendered = renderTask(task, version, options);
  return version === '1.0' ? { task: rendered } : rendered;
}

export interface TaskPageInput {
  tasks: TaskView[];
  /** Ids of the tasks whose history holds only its most recent part. */
  cutHistories?: ReadonlySet<string>;
  nextPageToken: string | null;
  pageSize: number;
  totalSize: number;
}

/**
 * A ListTasks result. Histories share one byte budget per page: a task whose history would
 * overflow it is sent without history and flagged `metadata.relay.historyTruncated: true`.
 */
export function renderTaskPage(
  page: TaskPageInput,
  version: WireVersion,
  options: { historyLength?: number; includeArtifacts?: boolean; historyBudgetBytes?: number } = {},
): Json {
  let remaining = options.historyBudgetBytes ?? LIST_HISTORY_BUDGET_BYTES;
  const tasks = page.tasks.map((task) => {
    const historyCut = page.cutHistories?.has(task.id) ?? false;
    const rendered = renderTask(task, version, { historyLength: options.historyLength, includeArtifacts: options.includeArtifacts ?? false, historyCut });
    if (rendered.history === undefined) return rendered;
    const size = Buffer.byteLength(JSON.stringify(rendered.history));
    if (size <= remaining) {
      remaining -= size;
      return rendered;
    }
    return renderTask(task, version, { historyLength: options.historyLength, includeArtifacts: options.includeArtifacts ?? false, historyTruncated: true });
  });
  return { tasks, nextPageToken: page.nextPageToken ?? '', pageSize: page.pageSize, totalSize: page.totalSize };
}
