import { TASK_STATE_AFTER_EVENT, type ArtifactView, type MessageView, type TaskEvent, type TaskState } from '@app/contracts';
import type { TaskRendering } from './render';
import { eventMessageView } from './task-event-render';

/** Whether the event is the one its state begins with (a commit's other events already carry the state the commit leaves). */
export function beginsState(event: TaskEvent): boolean {
  return TASK_STATE_AFTER_EVENT[event.type] === event.state;
}

/**
 * The task as it stood at the first of `events` that begins a state `settles` picks, made from
 * `start` (the task as a reply gave it) and the events of the task heard since, in the order they
 * were published; null when they cannot say it all, and the task is to be read instead:
 * - no such event was heard;
 * - `start` lacks part of its history, or an event's message lacks its parts (events written
 *   before they were carried), or the messages do not run from 1 to the count the event gives;
 * - a chunk appended to an artifact `start` and the events do not hold;
 * - the task has tool prompts (people's answers change it without a task event).
 * A task's events reach the stream one at a time in the order they committed, each once the one
 * before it was stored, so events heard in order on one connection miss none in between; the
 * caller gives none when its connection to the stream was lost meanwhile. An event heard twice
 * (published again after a lost acknowledgement) counts once.
 */
export function taskAfterEvents(
  start: TaskRendering & { message_count: number },
  events: readonly TaskEvent[],
  settles: (state: TaskState) => boolean,
): TaskRendering | null {
  if (start.tool_prompts !== null || start.messages.length !== start.message_count) return null;
  const messages = new Map<number, MessageView>(start.messages.map((message) => [message.sequence_no, message]));
  const artifacts: ArtifactView[] = start.artifacts.map((artifact) => ({ ...artifact }));
  const seen = new Set<string>();
  for (const event of events) {
    if (event.task_id !== start.id || seen.has(event.event_id)) continue;
    seen.add(event.event_id);
    const latest = event.task.latest_message;
    if (latest) {
      if (latest.parts === undefined) return null;
      if (!messages.has(latest.sequence_no)) messages.set(latest.sequence_no, eventMessageView(event, latest));
    }
    if (event.type === 'artifact_updated' && event.artifact && !applyArtifact(artifacts, event.artifact)) return null;
    if (!settles(event.state) || !beginsState(event)) continue;
    const ordered = [...messages.values()].sort((a, b) => a.sequence_no - b.sequence_no);
    if (ordered.length !== event.task.message_count || ordered.some((message, index) => message.sequence_no !== index + 1)) return null;
    return { ...start, state: event.state, status_timestamp: event.occurred_at, messages: ordered, artifacts };
  }
  return null;
}

/** An `artifact_updated` event's artifact applied as the tasks service stored it; false: a chunk of an artifact not held. */
function applyArtifact(artifacts: ArtifactView[], update: NonNullable<TaskEvent['artifact']>): boolean {
  const { append, last_chunk: _lastChunk, ...artifact } = update;
  const index = artifacts.findIndex((held) => held.artifact_id === artifact.artifact_id);
  if (append) {
    if (index < 0) return false;
    const held = artifacts[index];
    artifacts[index] = { ...held, parts: [...held.parts, ...artifact.parts], metadata: { ...held.metadata, ...artifact.metadata } };
  } else if (index < 0) artifacts.push(artifact);
  else artifacts[index] = artifact;
  return true;
}
