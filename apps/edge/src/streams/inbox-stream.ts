import { Inject, Injectable } from '@nestjs/common';
import { RelayError, TASKS_SUBJECTS, type AgentIdentity, type InboxEventsReply, type PositionedTaskEvent } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { EdgeConfig } from '../edge.config';
import { EventQueue } from './event-queue';
import { readAfterResync } from './resync-read';
import { StreamIds } from './stream-ids';
import { TaskEventFeed } from './task-event-feed';
import { EventStream, type StreamItem } from './task-streams';

/** How many positions a live inbox remembers having written, so that an event is never written twice. */
const WRITTEN_MEMORY = 4096;

/** A task event as the live inbox shows it, in AgentRelay shapes (docs/dialects.md#live-inbox-taskswatch). */
export function renderInboxEvent({ event }: PositionedTaskEvent): Record<string, unknown> {
  const message = event.task.latest_message;
  return {
    event: event.type,
    task_id: event.task_id,
    context_id: event.context_id,
    status: { state: event.state },
    sender: event.sender,
    recipient: event.recipient,
    intent: event.task.intent,
    summary: event.task.summary,
    message: message && event.type !== 'accepted' ? { message_id: message.id, sequence_no: message.sequence_no, from: message.from, body: message.body } : null,
    ...(event.artifact
      ? {
          artifact: {
            artifact_id: event.artifact.artifact_id,
            type: event.artifact.type,
            name: event.artifact.name,
            append: event.artifact.append,
            last_chunk: event.artifact.last_chunk,
          },
        }
      : {}),
    result_summary: event.task.result_summary,
    reason: event.task.reason,
    occurred_at: event.occurred_at,
  };
}

/**
 * The live inbox of one agent (`tasks/watch`): a `ready` event whose id is where the inbox stands,
 * or, with `Last-Event-ID`, the agent's events after it read back from the outbox; then every event
 * of every task the agent takes part in as it is relayed. Events of different tasks can commit out
 * of position order, so the stream remembers what it wrote rather than the highest position. The
 * ids are positions sealed for the agent (StreamIds): they reveal nothing of the other agents' events.
 */
@Injectable()
export class InboxStreams {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(TaskEventFeed) private readonly feed: TaskEventFeed,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(StreamIds) private readonly ids: StreamIds,
  ) {}

  /** `lastEventId`: the `Last-Event-ID` header, an id this agent's inbox showed it. */
  async open(caller: AgentIdentity, lastEventId: string | undefined): Promise<EventStream> {
    const resumeAfter = lastEventId !== undefined ? this.ids.decode(lastEventId, caller.id, 'inbox') : undefined;
    const queue = new EventQueue(this.config.RELAY_STREAM_BUFFER_BYTES);
    const stopLive = this.feed.followAgent(caller.handle, (item) => queue.push(item));
    const stopResync = this.feed.onReconnect(() => queue.requestResync());
    const stopFollowing = (): void => {
      stopLive();
      stopResync();
    };
    try {
      const start = await this.read(caller, resumeAfter);
      const deadline = Date.now() + this.config.RELAY_STREAM_MAX_MS;
      return new EventStream(
        (signal) => this.run(caller, resumeAfter, start, queue, deadline, signal, stopFollowing),
        stopFollowing,
        () => queue.bufferedBytes,
      );
    } catch (error) {
      stopFollowing();
      throw error;
    }
  }

  private async *run(
    caller: AgentIdentity,
    resumeAfter: string | undefined,
    start: InboxEventsReply,
    queue: EventQueue,
    deadline: number,
    signal: AbortSignal,
    stopFollowing: () => void,
  ): AsyncGenerator<StreamItem> {
    const written = new Set<string>();
    const remember = (position: string): void => {
      written.add(position);
      if (written.size > WRITTEN_MEMORY) written.delete(written.values().next().value as string);
    };
    let last = start.position;
    try {
      if (resumeAfter === undefined) {
        yield { id: this.id(start.position, caller), event: { event: 'ready' } };
      } else {
        let page = start;
        for (;;) {
          for (const item of page.events) {
            remember(item.position);
            last = item.position;
            yield { id: this.id(item.position, caller), event: renderInboxEvent(item) };
          }
          if (!page.has_more || signal.aborted) break;
          page = await this.read(caller, last);
        }
      }
      for (;;) {
        const next = await queue.next(deadline, signal);
        if (next.kind === 'deadline' || next.kind === 'aborted') return;
        if (next.kind === 'resync') {
          // Events of different tasks may become visible out of position order: read again from the oldest one remembered.
          let after = written.size > 0 ? [...written].reduce((oldest, position) => (BigInt(position) < BigInt(oldest) ? position : oldest)) : last;
          const readAfter = () => readAfterResync(() => this.read(caller, after), deadline, signal);
          for (let page = await readAfter(); ; page = await readAfter()) {
            for (const item of page.events) {
              after = item.position;
              if (written.has(item.position)) continue;
              remember(item.position);
              last = item.position;
              yield { id: this.id(item.position, caller), event: renderInboxEvent(item) };
            }
            if (!page.has_more || signal.aborted) break;
          }
          continue;
        }
        if (next.kind === 'overflow') {
          throw new RelayError('overloaded', `The inbox fell more than its buffer behind; watch again with Last-Event-ID: ${this.id(last, caller)}`, {
            last_event_id: this.id(last, caller),
          });
        }
        if (written.has(next.item.position)) continue;
        remember(next.item.position);
        last = next.item.position;
        yield { id: this.id(next.item.position, caller), event: renderInboxEvent(next.item) };
      }
    } finally {
      stopFollowing();
    }
  }

  private id(position: string, caller: AgentIdentity): string {
    return this.ids.encode(position, caller.id, 'inbox');
  }

  private async read(caller: AgentIdentity, after: string | undefined): Promise<InboxEventsReply> {
    try {
      return await this.rpc.request(TASKS_SUBJECTS.inbox_events, { caller_handle: caller.handle, ...(after !== undefined ? { after_position: after } : {}) });
    } catch (error) {
      throw this.ids.sealError(error, caller.id, 'inbox');
    }
  }
}
