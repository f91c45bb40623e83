import { Controller, Get, Inject, Injectable, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  ADMIN_TASK_LIMITS,
  ADMIN_TASKS_SUBJECTS,
  orgOf,
  RelayError,
  type AdminEventsReply,
  type AdminTaskEvent,
  type PositionedTaskEvent,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { hidesBodies, LeastRole } from '../admin-roles';
import { adminPrincipalOf, AdminTokenGuard } from '../sign-in/admin-token.guard';
import { EdgeConfig } from '../../edge.config';
import { SseWriter, type SseFraming } from '../../endpoint/sse-writer';
import { EventQueue } from '../../streams/event-queue';
import { TaskEventFeed } from '../../streams/task-event-feed';
import { EventStream, lastEventId, type StreamItem } from '../../streams/task-streams';
import { AdminEventLimits } from './admin-event-limits';
import { AdminExceptionFilter } from '../admin-errors';
import { HIDDEN_TEXT } from '../tasks/hidden-bodies';

/** How many positions the stream remembers having written, so that an event is never written twice. */
const WRITTEN_MEMORY = 4096;

/** A task event as the console shows it (`event: task`). */
export function renderAdminEvent({ position, event }: PositionedTaskEvent, hideBodies = false): AdminTaskEvent {
  const summary = hideBodies ? HIDDEN_TEXT : event.task.summary;
  return {
    position,
    event: event.type,
    task_id: event.task_id,
    state: event.state,
    intent: event.task.intent,
    summary: summary.length > ADMIN_TASK_LIMITS.rowSummaryChars ? `${summary.slice(0, ADMIN_TASK_LIMITS.rowSummaryChars - 1)}…` : summary,
    sender: event.sender,
    recipient: event.recipient,
    at: event.occurred_at,
  };
}

/** An item of the admin stream: `ready` (where it starts) or a `task` event, each under its SSE event name. */
type AdminStreamEvent = { kind: 'ready'; data: { position: string } } | { kind: 'task'; data: AdminTaskEvent };

/** The admin stream through the edge's one SSE writer: named events, its errors in the admin API's body. */
export const ADMIN_EVENTS_FRAMING: SseFraming = {
  name: (item) => (item as AdminStreamEvent).kind,
  event: (item) => (item as AdminStreamEvent).data,
  error: (error) => ({ error: { reason: error.reason, message: error.message, data: error.data ?? {} } }),
};

/**
 * `GET /admin/events`: every task event of the relay as Server-Sent Events, from the edge's one
 * task event feed (the agents' streams use the same). With `Last-Event-ID` the events after it are
 * read back from the outbox first, in byte-bounded pages, each at its turn (AdminEventLimits: so
 * many pages a second per console session and per edge), the next one once the writer has taken the
 * last event of the one before. An `event: ready` carries where the stream starts. The SSE writer
 * does the rest as for agents' streams: keep-alives, backpressure, the stream's bounded buffer
 * (RELAY_STREAM_BUFFER_BYTES) and the stall timeout; RELAY_STREAM_MAX_MS bounds it. The open streams
 * are bounded per session and per edge (AdminEventLimits).
 */
@Injectable()
export class AdminEventStreams {
  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(TaskEventFeed) private readonly feed: TaskEventFeed,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(AdminEventLimits) private readonly limits: AdminEventLimits,
  ) {}

  /**
   * Takes one of `session`'s stream slots (or throws `rate_limited`), follows the feed, then reads
   * where the stream starts (so that no event falls between the two); `hideBodies` leaves
   * summaries out. The slot is freed when the stream is released, or at once when it cannot open.
   */
  async open(session: string, resumeAfter: string | undefined, hideBodies = false, orgs: 'all' | string[] = 'all'): Promise<EventStream> {
    const releaseSlot = this.limits.reserve(session);
    try {
      const stream = await this.follow(session, resumeAfter, hideBodies, orgs);
      return new EventStream(
        stream.open,
        () => {
          stream.release();
          releaseSlot();
        },
        stream.bufferedBytes,
      );
    } catch (error) {
      releaseSlot();
      throw error;
    }
  }

  private async follow(session: string, resumeAfter: string | undefined, hideBodies: boolean, orgs: 'all' | string[]): Promise<EventStream> {
    const queue = new EventQueue(this.config.RELAY_STREAM_BUFFER_BYTES);
    const stopLive = this.feed.followAll((item) => queue.push(item));
    const stopResync = this.feed.onReconnect(() => queue.requestResync());
    const stopFollowing = (): void => {
      stopLive();
      stopResync();
    };
    try {
      const start = await this.read(session, resumeAfter);
      return new EventStream(
        (signal) => this.run(session, queue, start, resumeAfter, hideBodies, orgs, signal),
        stopFollowing,
        () => queue.bufferedBytes,
      );
    } catch (error) {
      stopFollowing();
      throw error;
    }
  }

  private async *run(
    session: string,
    queue: EventQueue,
    start: AdminEventsReply,
    resumeAfter: string | undefined,
    hideBodies: boolean,
    orgs: 'all' | string[],
    signal: AbortSignal,
  ): AsyncGenerator<StreamItem> {
    const deadline = Date.now() + this.config.RELAY_STREAM_MAX_MS;
    // A person with roles in orgs hears only of handoffs one of their agents is party to.
    const shown = orgs === 'all' ? undefined : new Set(orgs);
    const visible = ({ event }: PositionedTaskEvent): boolean => shown === undefined || shown.has(orgOf(event.sender)) || shown.has(orgOf(event.recipient));
    const written = new Set<string>();
    let last = resumeAfter ?? start.position;
    const item = (event: PositionedTaskEvent): StreamItem => {
      written.add(event.position);
      if (written.size > WRITTEN_MEMORY) written.delete(written.values().next().value as string);
      if (BigInt(event.position) > BigInt(last)) last = event.position;
      return { id: event.position, event: { kind: 'task', data: renderAdminEvent(event, hideBodies) } };
    };
    const read = (after: string): Promise<AdminEventsReply> => this.read(session, after, signal);
    async function* replay(after: string, first?: AdminEventsReply): AsyncGenerator<StreamItem> {
      let cursor = after;
      for (let page = first ?? (await read(cursor)); ; page = await read(cursor)) {
        for (const event of page.events) {
          cursor = event.position;
          if (!written.has(event.position) && visible(event)) yield item(event);
        }
        if (!page.has_more || signal.aborted) return;
      }
    }
    yield { id: last, event: { kind: 'ready', data: { position: last } } };
    if (resumeAfter !== undefined) yield* replay(resumeAfter, start);
    for (;;) {
      const next = await queue.next(deadline, signal);
      if (next.kind === 'deadline' || next.kind === 'aborted') return;
      if (next.kind === 'overflow') {
        throw new RelayError('overloaded', `The stream fell behind its buffer; connect again with Last-Event-ID: ${last} to read on from there`, {
          last_event_id: last,
        });
      }
      if (next.kind === 'resync') {
        // Events of different tasks may become visible out of position order: read again from the oldest one remembered.
        yield* replay(written.size > 0 ? [...written].reduce((a, b) => (BigInt(a) < BigInt(b) ? a : b)) : last);
        continue;
      }
      if (!written.has(next.item.position) && visible(next.item)) yield item(next.item);
    }
  }

  /** Where the stream is now, or a page of the events after a position, read at the session's turn. */
  private async read(session: string, after: string | undefined, signal?: AbortSignal): Promise<AdminEventsReply> {
    if (after === undefined) return this.rpc.request(ADMIN_TASKS_SUBJECTS.events, {});
    await this.limits.pace(session, signal);
    return this.rpc.request(ADMIN_TASKS_SUBJECTS.events, { after_position: after });
  }
}

@Controller('admin/events')
@UseGuards(AdminTokenGuard)
@LeastRole('auditor')
@UseFilters(AdminExceptionFilter)
export class AdminEventsController {
  constructor(
    @Inject(AdminEventStreams) private readonly streams: AdminEventStreams,
    @Inject(SseWriter) private readonly sse: SseWriter,
  ) {}

  @Get()
  async stream(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const principal = adminPrincipalOf(request);
    const stream = await this.streams.open(principal.actor, lastEventId(request.headers), hidesBodies(principal.role), principal.orgs);
    await this.sse.write(reply, stream, ADMIN_EVENTS_FRAMING);
  }
}
