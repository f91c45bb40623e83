import { createHash } from 'node:crypto';
import { Role, TaskState, type Artifact, type Message, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  isTerminalState,
  messageReplyBytes,
  metadataBoundsProblem,
  PAYLOAD_LIMITS,
  TASK_LIMITS,
  type ArtifactInput,
  type MessageInput,
  type PartDto,
  type PartView,
  type TaskState as RelayState,
  type UpstreamReportCommand,
} from '@app/contracts';
import { relayStateOfUpstream } from './mapping';

/** What of an upstream task the relay task already holds: its state as the relay applied it, the messages and artifacts reported. */
export interface ReportedProgress {
  relay_state: RelayState;
  /** Upstream message ids already in the relay task. */
  messages: string[];
  /** Upstream artifact id → digest of the version already in the relay task. */
  artifacts: Record<string, string>;
}

export const NOTHING_REPORTED: ReportedProgress = { relay_state: 'pending', messages: [], artifacts: {} };

/** One change the relay task needs, made by the recipient (the upstream agent) through the tasks service. */
export type ReportStep =
  | { kind: 'transition'; transition: UpstreamReportCommand; message?: MessageInput; artifacts?: ArtifactInput[]; reason?: string; result_summary?: string }
  | { kind: 'append'; message: MessageInput; artifacts?: ArtifactInput[] };

/** A relay part as an A2A v1.0 part of the official SDK. */
export function toSdkPart(part: PartView): Part {
  switch (part.kind) {
    case 'text':
      return { content: { $case: 'text', value: part.text }, metadata: part.metadata, filename: part.filename ?? '', mediaType: part.media_type ?? '' };
    case 'data':
      return { content: { $case: 'data', value: part.data }, metadata: part.metadata, filename: part.filename ?? '', mediaType: part.media_type ?? '' };
    case 'file':
      return {
        content: part.file.bytes !== undefined ? { $case: 'raw', value: Buffer.from(part.file.bytes, 'base64') } : { $case: 'url', value: part.file.uri ?? '' },
        metadata: part.metadata,
        filename: part.file.name ?? '',
        mediaType: part.file.mime_type ?? '',
      };
  }
}

function bounded(value: string, chars: number): string {
  return value.length > chars ? value.slice(0, chars) : value;
}

function metadataOf(value: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  return value && Object.keys(value).length > 0 ? value : undefined;
}

/** An SDK part as the tasks service takes it (null for a part without content). */
export function fromSdkPart(part: Part): PartDto | null {
  const extra = {
    ...(part.mediaType ? { media_type: bounded(part.mediaType, TASK_LIMITS.mediaTypeChars) } : {}),
    ...(part.filename ? { filename: bounded(part.filename, TASK_LIMITS.fileNameChars) } : {}),
    ...(metadataOf(part.metadata) ? { metadata: part.metadata } : {}),
  };
  const file = {
    ...(part.filename ? { name: bounded(part.filename, TASK_LIMITS.fileNameChars) } : {}),
    ...(part.mediaType ? { mime_type: part.mediaType } : {}),
  };
  switch (part.content?.$case) {
    case 'text':
      return { kind: 'text', text: bounded(part.content.value, TASK_LIMITS.textPartChars), ...extra };
    case 'data':
      return { kind: 'data', data: part.content.value ?? {}, ...extra };
    case 'raw':
      return {
        kind: 'file',
        file: { ...file, bytes: Buffer.from(part.content.value).toString('base64') },
        ...(metadataOf(part.metadata) ? { metadata: part.metadata } : {}),
      };
    case 'url':
      return { kind: 'file', file: { ...file, uri: part.content.value }, ...(metadataOf(part.metadata) ? { metadata: part.metadata } : {}) };
    default:
      return null;
  }
}

function partsOf(parts: Part[]): PartDto[] {
  return parts
    .map(fromSdkPart)
    .filter((part): part is PartDto => part !== null)
    .slice(0, TASK_LIMITS.partsPerMessage);
}

function firstText(message: Message | undefined): string | null {
  for (const part of message?.parts ?? []) if (part.content?.$case === 'text' && part.content.value.trim()) return part.content.value;
  return null;
}

function messageInput(message: Message): MessageInput | null {
  const parts = partsOf(message.parts);
  if (parts.length === 0) return null;
  return { message_id: bounded(message.messageId, TASK_LIMITS.messageIdChars), parts, ...(metadataOf(message.metadata) ? { payload: message.metadata } : {}) };
}

function artifactDigest(artifact: Artifact): string {
  return createHash('sha256')
    .update(JSON.stringify([artifact.name, artifact.description, artifact.parts, artifact.metadata ?? null]))
    .digest('base64url')
    .slice(0, 22);
}

function artifactInput(artifact: Artifact): ArtifactInput | null {
  const parts = partsOf(artifact.parts);
  if (parts.length === 0 || !artifact.artifactId) return null;
  return {
    artifact_id: bounded(artifact.artifactId, TASK_LIMITS.artifactIdChars),
    parts,
    ...(artifact.name ? { name: bounded(artifact.name, TASK_LIMITS.artifactNameChars) } : {}),
    ...(artifact.description ? { description: bounded(artifact.description, TASK_LIMITS.artifactDescriptionChars) } : {}),
    ...(metadataOf(artifact.metadata) ? { metadata: artifact.metadata } : {}),
  };
}

/** The relay state an upstream task state stands for (null: not started yet), by the one state table (`A2A_TASK_STATES`). */
export function relayStateOf(state: TaskState | undefined): RelayState | null {
  return relayStateOfUpstream(state);
}

/** Whether the upstream task has come to a state the relay task waits in without polling: ended, or waiting for the sender's input. */
export function isSettled(task: Task): boolean {
  const state = relayStateOf(task.status?.state);
  return state !== null && (isTerminalState(state) || state === 'input_required');
}

/** A direct answer without a task (the upstream answered `SendMessage` with a Message): the same as a task completed with it. */
export function taskOfMessage(message: Message, taskId: string): Task {
  return {
    id: taskId,
    contextId: message.contextId,
    status: { state: TaskState.TASK_STATE_COMPLETED, message, timestamp: undefined },
    artifacts: [],
    history: [],
    metadata: undefined,
  };
}

/**
 * The upstream task as a stream has shown it so far: a `task` event is the whole task (the first
 * event of `SubscribeToTask`, and of `SendStreamingMessage` on SDK servers); a status update
 * replaces the status (the status message it replaces stays in the history); an artifact update
 * adds or replaces the artifact, or appends its chunk to it; a message is a direct answer. What it
 * returns is planned with `planReport` like a `GetTask` answer, so a resumed stream (which starts
 * with the whole task again) repeats nothing and misses nothing the task still shows.
 */
export function applyStreamEvent(snapshot: Task | null, event: StreamResponse, taskId: string): Task | null {
  const payload = event.payload;
  if (!payload) return snapshot;
  if (payload.$case === 'task') return structuredClone(payload.value);
  if (payload.$case === 'message') return snapshot ?? taskOfMessage(payload.value, taskId);
  const base: Task = snapshot
    ? structuredClone(snapshot)
    : {
        id: payload.value.taskId,
        contextId: payload.value.contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: undefined },
        artifacts: [],
        history: [],
        metadata: undefined,
      };
  if (payload.$case === 'statusUpdate') {
    const previous = base.status?.message;
    if (previous && !base.history.some((message) => message.messageId === previous.messageId)) base.history.push(previous);
    if (payload.value.status) base.status = payload.value.status;
    return base;
  }
  const artifact = payload.value.artifact;
  if (!artifact) return base;
  const index = base.artifacts.findIndex((entry) => entry.artifactId === artifact.artifactId);
  if (index < 0) base.artifacts.push(artifact);
  else if (payload.value.append) base.artifacts[index] = { ...base.artifacts[index], parts: [...base.artifacts[index].parts, ...artifact.parts] };
  else base.artifacts[index] = artifact;
  return base;
}

/**
 * The changes that bring the relay task up to what the upstream task shows now, and what will
 * have been reported once they are made. The upstream's agent messages (history and status
 * message) are appended once each by their own message id (the tasks service's idempotency key
 * per author); an artifact is written when new or changed; the state follows the upstream's:
 * working is an accept, input-required (or auth-required) a request for input with the status
 * message as the question, completed, failed and rejected end the relay task the same way (a
 * canceled upstream task fails it, as only the sender cancels a relay task).
 */
export function planReport(task: Task, reported: ReportedProgress): { steps: ReportStep[]; next: ReportedProgress } {
  const steps: ReportStep[] = [];
  if (isTerminalState(reported.relay_state)) return { steps, next: reported };
  const seen = new Set(reported.messages);
  const statusMessage = task.status?.message?.role === Role.ROLE_AGENT ? task.status.message : undefined;
  const candidates = [...task.history.filter((message) => message.role === Role.ROLE_AGENT), ...(statusMessage ? [statusMessage] : [])];
  const fresh: Message[] = [];
  for (const message of candidates) {
    if (!message.messageId || seen.has(message.messageId)) continue;
    seen.add(message.messageId);
    fresh.push(message);
  }
  const artifacts: ArtifactInput[] = [];
  const digests = { ...reported.artifacts };
  for (const artifact of task.artifacts) {
    const digest = artifactDigest(artifact);
    if (digests[artifact.artifactId] === digest) continue;
    const input = artifactInput(artifact);
    if (!input) continue;
    digests[artifact.artifactId] = digest;
    artifacts.push(input);
  }
  const target = relayStateOf(task.status?.state);
  let state = reported.relay_state;
  // Working again after a request for input: the sender's answer has put the relay task back to work.
  if (target === 'accepted' && state === 'input_required') state = 'accepted';
  if (target !== null && state === 'pending' && target !== 'rejected') {
    steps.push({ kind: 'transition', transition: 'accept' });
    state = 'accepted';
  }
  // Asking again: a new question while the relay task was last put to input_required (the
  // sender's answer resumed it meanwhile, or the upstream changed its question).
  // The status message is fresh by its id: a server may also keep it in the history (another object, the same message).
  const statusIsFresh = statusMessage !== undefined && fresh.some((message) => message.messageId === statusMessage.messageId);
  const asksAgain = target === 'input_required' && state === 'input_required' && statusIsFresh;
  const ending = target !== null && target !== 'accepted' && (target !== state || asksAgain);
  // The status message goes with the transition it explains; the other new messages before it.
  const carried = ending && statusIsFresh ? statusMessage : undefined;
  const appended = fresh.filter((message) => message.messageId !== carried?.messageId);
  let artifactsLeft = artifacts.length > 0 ? artifacts.slice(0, TASK_LIMITS.artifactsPerRequest) : undefined;
  const canAppend = state !== 'pending' || target === null;
  for (const [index, message] of appended.entries()) {
    const input = messageInput(message);
    if (!input || !canAppend) continue;
    const last = index === appended.length - 1;
    steps.push({ kind: 'append', message: input, ...(last && !ending && artifactsLeft ? { artifacts: artifactsLeft } : {}) });
    if (last && !ending) artifactsLeft = undefined;
  }
  const carriedInput = carried ? (messageInput(carried) ?? undefined) : undefined;
  const why = firstText(task.status?.message);
  if (ending) {
    switch (target) {
      case 'input_required':
        steps.push({
          kind: 'transition',
          transition: 'request_input',
          message: carriedInput ?? { parts: [{ kind: 'text', text: why ?? 'The agent needs more input.' }] },
          ...(artifactsLeft ? { artifacts: artifactsLeft } : {}),
        });
        break;
      case 'completed':
        steps.push({
          kind: 'transition',
          transition: 'complete',
          ...(carriedInput ? { message: carriedInput } : {}),
          ...(artifactsLeft ? { artifacts: artifactsLeft } : {}),
          ...(why ? { result_summary: bounded(why, TASK_LIMITS.textPartChars) } : {}),
        });
        break;
      case 'failed':
      case 'rejected': {
        const canceled = task.status?.state === TaskState.TASK_STATE_CANCELED;
        const reason = bounded(why ?? (canceled ? 'The upstream agent canceled the task.' : `The upstream agent ${target} the task.`), TASK_LIMITS.reasonChars);
        steps.push({
          kind: 'transition',
          transition: state === 'pending' ? 'decline' : 'fail',
          ...(carriedInput ? { message: carriedInput } : {}),
          ...(artifactsLeft ? { artifacts: artifactsLeft } : {}),
          reason,
        });
        break;
      }
    }
    artifactsLeft = undefined;
    state = target === 'rejected' && state !== 'pending' ? 'failed' : target;
  }
  if (artifactsLeft && state !== 'pending') steps.push({ kind: 'transition', transition: 'progress', artifacts: artifactsLeft });
  else if (artifactsLeft) for (const artifact of artifactsLeft) digests[artifact.artifact_id as string] = reported.artifacts[artifact.artifact_id as string];
  return { steps, next: { relay_state: state, messages: [...seen], artifacts: digests } };
}

/** `field` and what is wrong with it against the metadata bounds, or undefined when it is within them (or absent). */
function metadataProblem(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  const problem = metadataBoundsProblem(value);
  return problem === undefined ? undefined : `${field} ${problem}`;
}

/** What is out of the relay's bounds in these parts (each `data` part and each part's metadata, as the edge checks a client's), if anything. */
function partsBoundsProblem(parts: readonly PartDto[], field: string): string | undefined {
  for (const [index, part] of parts.entries()) {
    const problem =
      (part.kind === 'data' ? metadataProblem(part.data, `${field}[${index}].data`) : undefined) ??
      metadataProblem(part.metadata, `${field}[${index}].metadata`);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/**
 * What in these report steps is out of the bounds the edge holds an agent's own input to (a
 * `data` part's or a metadata object's keys, nesting and bytes; a message a reply of the tasks
 * service could not carry under this NATS `max_payload`), named as a reason; undefined when all is
 * within them. Nothing out of bounds is stored: the follow ends instead.
 */
export function reportBoundsProblem(steps: readonly ReportStep[], natsMaxPayload: number): string | undefined {
  const replyLimit = natsMaxPayload - PAYLOAD_LIMITS.internalEnvelopeBytes;
  for (const step of steps) {
    const message = step.message;
    if (message) {
      const problem = partsBoundsProblem(message.parts, 'message.parts') ?? metadataProblem(message.payload, 'message.metadata');
      if (problem !== undefined) return problem;
      const bytes = messageReplyBytes(message);
      if (bytes > replyLimit) return `a message of ${bytes} bytes is larger than the relay carries (${replyLimit})`;
    }
    for (const artifact of step.artifacts ?? []) {
      const field = `artifact ${artifact.artifact_id ?? ''}`;
      const problem = partsBoundsProblem(artifact.parts ?? [], `${field} parts`) ?? metadataProblem(artifact.metadata, `${field} metadata`);
      if (problem !== undefined) return problem;
    }
  }
  return undefined;
}
