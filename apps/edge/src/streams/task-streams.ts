import { Inject, Injectable } from '@nestjs/common';
import { renderSendResult, renderTaskEvent, toWireState, type Json } from '@app/a2a';
import {
  isTerminalState,
  RelayError,
  type WireVersion,
  TASKS_SUBJECTS,
  type AgentIdentity,
  type PositionedTaskEvent,
  type TaskEvent,
  type TaskEventsReply,
  type TaskEventsRequest,
  type TaskState,
  type TaskView,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { DirectoryLookups } from '../directory/directory-lookups';
import { EdgeConfig } from '../edge.config';
import { EventQueue } from './event-queue';
import { readAfterResync } from './resync-read';
import { StreamIds, type StreamScope } from './stream-ids';
import { TaskEventFeed } from './task-event-feed';

/** One item of a stream: its SSE `id` (the position of the last task event it shows, sealed for the caller: StreamIds) and the rendered event. */
export interface StreamItem {
  id: string;
  event: Json;
}

/**
 * What a stream is answered as: items read as the client reads; `signal` aborts when the client
 * goes away. `release` lets go of what the stream holds (idempotent): reading it to its end does,
 * and whoever does not read it must call it.
 */
export class EventStream {
  constructor(
    readonly open: (signal: AbortSignal) => AsyncIterable<StreamItem>,
    readonly release: () => void = () => undefined,
    /** Bytes of live events waiting in the stream's own buffer. */
    readonly bufferedBytes: () => number = () => 0,
  ) {}
}

/**
 * `send`: the stream of SendStreamingMessage / message/stream, which ends when the task is
 * terminal or waits for the sender (input-required). `subscribe`: SubscribeToTask /
 * tasks/resubscribe, which ends only when the task is terminal.
 */
export type TaskStreamKind = 'send' | 'subscribe';

export interface TaskStreamRequest {
  caller: AgentIdentity;
  /** The {handle} of POST /a2a/{handle}: only tasks between the caller and that agent exist there. */
  endpointHandle: string | null;
  taskId: string;
  version: WireVersion;
  kind: TaskStreamKind;
  /** The `Last-Event-ID` header (an id this stream showed the caller): replay the events after it instead of starting with the Task. */
  lastEventId?: string;
  historyLength?: number;
}

/** An outbox position, the event id of the operators' event stream (docs/events.md#positions-and-stream-ids). */
const POSITION = /^[0-9]{1,19}$/;

/** The `Last-Event-ID` header of a request that resumes a stream, if any, as sent (an agent stream's opaque id). */
export function lastEventIdHeader(headers: Record<string, string | string[] | undefined>): string | undefined {
  const value = headers['last-event-id'];
  const id = (Array.isArray(value) ? value[0] : value)?.trim();
  return id === undefined || id === '' ? undefined : id;
}

/** The `Last-Event-ID` header of a stream whose ids are positions, if any; one that cannot be a position is `invalid_params`. */
export function lastEventId(headers: Record<string, string | string[] | undefined>): string | undefined {
  const id = lastEventIdHeader(headers);
  if (id !== undefined && !POSITION.test(id))
    throw new RelayError('invalid_params', `Last-Event-ID '${id.slice(0, 40)}' is not an event id of this relay`, { field: 'Last-Event-ID' });
  return id;
}

function endsStream(kind: TaskStreamKind, state: TaskState): boolean {
  return isTerminalState(state) || (kind === 'send' && state === 'input_required');
}

/** Whether the stream ends with this event: a change of state that settles it (an artifact written with a completion comes before the completion's own event). */
function endsWith(kind: TaskStreamKind, event: TaskEvent): boolean {
  return event.type !== 'artifact_updated' && endsStream(kind, event.state);
}

function isAfter(position: string, than: string): boolean {
  return BigInt(position) > BigInt(than);
}

/**
 * Streams built from the task's event log (docs/events.md#positions-and-stream-ids): the Task as of
 * its newest event (or, with `Last-Event-ID`, the events after that one, read back from the
 * tasks service's outbox), then each task event as it is relayed, one stream event per task event,
 * in the task's order. Every edge renders an agent the same events with the same ids; the ids are
 * positions sealed for the caller and the task (StreamIds), so they reveal nothing of other tasks.
 */
@Injectable()
export class TaskStreams {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(TaskEventFeed) private readonly feed: TaskEventFeed,
    @Inject(DirectoryLookups) private readonly directory: DirectoryLookups,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(StreamIds) private readonly ids: StreamIds,
  ) {}

  /**
   * Checks the request and reads where the stream starts before answering, so that an error here
   * is a plain JSON-RPC error; the events follow as the returned stream is read.
   */
  async open(request: TaskStreamRequest): Promise<EventStream> {
    const scope: StreamScope = { task: request.taskId };
    const after = request.lastEventId !== undefined ? this.ids.decode(request.lastEventId, request.caller.id, scope) : undefined;
    const endpoint = request.endpointHandle !== null ? await this.directory.profile(request.endpointHandle) : null;
    const queue = new EventQueue(this.config.RELAY_STREAM_BUFFER_BYTES);
    // Listening before the read: an event committed after it arrives here; one before it is in the read.
    const stopLive = this.feed.followTask(request.taskId.toUpperCase(), (item) => queue.push(item));
    const stopResync = this.feed.onReconnect(() => queue.requestResync());
    const stopFollowing = (): void => {
      stopLive();
      stopResync();
    };
    try {
      const start = await this.events({
        caller_id: request.caller.id,
        task_id: request.taskId,
        ...(endpoint ? { counterpart_id: endpoint.id } : {}),
        snapshot: true,
        history_length: after !== undefined ? 0 : request.historyLength === undefined ? undefined : Math.max(1, request.historyLength),
        ...(after !== undefined ? { after_position: after } : {}),
      });
      const task = start.task as TaskView;
      if (after === undefined && request.kind === 'subscribe' && isTerminalState(task.state)) {
        const state = toWireState(task.state, request.version);
        throw new RelayError('unsupported_operation', `Task ${task.id} is ${state}, a terminal state, and cannot be subscribed to; read it with GetTask`, {
          taskId: task.id,
          state,
        });
      }
      const deadline = Date.now() + this.config.RELAY_STREAM_MAX_MS;
      return new EventStream(
        (signal) => this.run(request, after, start, task, queue, deadline, signal, stopFollowing),
        stopFollowing,
        () => queue.bufferedBytes,
      );
    } catch (error) {
      stopFollowing();
      throw error;
    }
  }

  private async *run(
    request: TaskStreamRequest,
    resumeAfter: string | undefined,
    start: TaskEventsReply,
    task: TaskView,
    queue: EventQueue,
    deadline: number,
    signal: AbortSignal,
    stopFollowing: () => void,
  ): AsyncGenerator<StreamItem> {
    const { kind, version } = request;
    try {
      let last = start.position;
      if (resumeAfter === undefined) {
        // The snapshot carries the newest messages that fit one reply; a longer history is flagged as cut.
        const wanted = Math.min(request.historyLength ?? task.message_count, task.message_count);
        const historyCut = task.messages.length < wanted;
        yield { id: this.id(start.position, request), event: renderSendResult(task, version, { historyLength: request.historyLength, historyCut }) };
        if (endsStream(kind, task.state)) return;
      } else {
        let page = start;
        let after = resumeAfter;
        for (;;) {
          for (const item of page.events) {
            yield this.item(item, request);
            after = item.position;
            if (endsWith(kind, item.event)) return;
          }
          if (!page.has_more || signal.aborted) break;
          page = await this.events({ caller_id: request.caller.id, task_id: request.taskId, after_position: after });
        }
        // Everything up to the read's newest event is written; a task that was already over ends here.
        if (!isAfter(last, after) && endsStream(kind, task.state)) return;
        if (isAfter(after, last)) last = after;
      }
      for (;;) {
        const next = await queue.next(deadline, signal);
        if (next.kind === 'deadline' || next.kind === 'aborted') return;
        if (next.kind === 'resync') {
          // What was published while the connection was down is read back from the log.
          const readAfter = (after: string) =>
            readAfterResync(() => this.events({ caller_id: request.caller.id, task_id: request.taskId, after_position: after }), deadline, signal);
          for (let page = await readAfter(last); ;) {
            for (const item of page.events) {
              last = item.position;
              yield this.item(item, request);
              if (endsWith(kind, item.event)) return;
            }
            if (!page.has_more || signal.aborted) break;
            page = await readAfter(last);
          }
          continue;
        }
        if (next.kind === 'overflow') {
          throw new RelayError(
            'overloaded',
            `The stream fell more than its buffer behind the task's events; subscribe again with Last-Event-ID: ${this.id(last, request)}`,
            {
              last_event_id: this.id(last, request),
            },
          );
        }
        if (!isAfter(next.item.position, last)) continue;
        last = next.item.position;
        yield this.item(next.item, request);
        if (endsWith(kind, next.item.event)) return;
      }
    } finally {
      stopFollowing();
    }
  }

  private item(item: PositionedTaskEvent, request: TaskStreamRequest): StreamItem {
    return { id: this.id(item.position, request), event: renderTaskEvent(item.event, request.version, endsWith(request.kind, item.event)) };
  }

  private id(position: string, request: TaskStreamRequest): string {
    return this.ids.encode(position, request.caller.id, { task: request.taskId });
  }

  /** A task id the tasks service cannot even parse is a task that is not found. */
  private async events(request: TaskEventsRequest): Promise<TaskEventsReply> {
    try {
      return await this.rpc.request(TASKS_SUBJECTS.events, request);
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'invalid_params' && error.data?.field === 'task_id')
        throw new RelayError('thread_not_found', 'Task not found');
      throw this.ids.sealError(error, request.caller_id, { task: request.task_id });
    }
  }
}
