import { Controller, Get, Inject, Injectable, Logger, Req, Res, UseFilters, UseGuards, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { ADMIN_TASK_LIMITS, ADMIN_TASKS_SUBJECTS, RelayError, type AdminEventsReply, type PositionedTaskEvent } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { AdminTokenGuard } from '../auth/admin-token.guard';
import { EdgeConfig } from '../edge.config';
import { RequestMetrics } from '../metrics/request-metrics';
import { EventQueue, STREAM_BUFFER_LIMIT } from '../streams/event-queue';
import { TaskEventFeed } from '../streams/task-event-feed';
import { lastEventId } from '../streams/task-streams';
import { AdminExceptionFilter } from './admin-errors';

/** A comment line on an idle admin stream, so that proxies keep it open. */
export const ADMIN_EVENTS_HEARTBEAT_MS = 15000;
/** How many positions the stream remembers having written, so that an event is never written twice. */
const WRITTEN_MEMORY = 4096;

/** A task event as the console shows it (`event: task`). */
export function renderAdminEvent({ position, event }: PositionedTaskEvent): Record<string, unknown> {
  const summary = event.task.summary;
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

/**
 * One admin event stream on a response: writes wait for the socket to drain (a slow reader holds
 * the stream, never the edge's memory), and the live events waiting meanwhile are bounded by the
 * queue (past STREAM_BUFFER_LIMIT the stream ends naming where to resume).
 */
class AdminEventWriter {
  constructor(
    private readonly raw: ServerResponse,
    private readonly signal: AbortSignal,
  ) {}

  get open(): boolean {
    return !this.signal.aborted && !this.raw.destroyed && !this.raw.writableEnded;
  }

  async write(chunk: string): Promise<void> {
    if (!this.open) return;
    if (!this.raw.write(chunk)) await Promise.race([once(this.raw, 'drain'), once(this.raw, 'close')]);
  }
}

/**
 * `GET /admin/events`: every task event of the relay as Server-Sent Events, from the edge's one
 * task event feed (the agents' streams use the same). With `Last-Event-ID` the events after it are
 * read back from the outbox first, in byte-bounded pages. An `event: ready` carries where the stream
 * starts; a `: keep-alive` comment goes out every 15 s; RELAY_STREAM_MAX_MS bounds it.
 */
@Injectable()
export class AdminEventStreams implements OnModuleDestroy {
  private readonly logger = new Logger(AdminEventStreams.name);
  private readonly streams = new Set<AbortController>();

  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(TaskEventFeed) private readonly feed: TaskEventFeed,
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
  ) {}

  onModuleDestroy(): void {
    for (const controller of this.streams) controller.abort();
  }

  async serve(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const resumeAfter = lastEventId(request.headers);
    const queue = new EventQueue();
    const stopLive = this.feed.followAll((item) => queue.push(item));
    const stopResync = this.feed.onReconnect(() => queue.requestResync());
    let start: AdminEventsReply;
    try {
      start = await this.read(resumeAfter);
    } catch (error) {
      stopLive();
      stopResync();
      throw error;
    }
    reply.hijack();
    const raw = reply.raw;
    const controller = new AbortController();
    const onClose = (): void => controller.abort();
    raw.on('close', onClose);
    this.streams.add(controller);
    this.metrics.streamOpened();
    const writer = new AdminEventWriter(raw, controller.signal);
    const heartbeat = setInterval(() => {
      if (writer.open && raw.writableNeedDrain !== true) raw.write(': keep-alive\n\n');
    }, ADMIN_EVENTS_HEARTBEAT_MS);
    try {
      raw.writeHead(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-store',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      raw.flushHeaders();
      await this.run(writer, queue, start, resumeAfter, controller.signal);
    } catch (error) {
      const relayError = error instanceof RelayError ? error : new RelayError('internal_error', 'The event stream failed');
      if (!(error instanceof RelayError)) this.logger.error({ err: error }, 'admin event stream failed');
      await writer.write(
        `event: error\ndata: ${JSON.stringify({ error: { reason: relayError.reason, message: relayError.message, data: relayError.data ?? {} } })}\n\n`,
      );
    } finally {
      stopLive();
      stopResync();
      clearInterval(heartbeat);
      raw.off('close', onClose);
      this.streams.delete(controller);
      this.metrics.streamClosed();
      if (!raw.writableEnded) raw.end();
    }
  }

  private async run(writer: AdminEventWriter, queue: EventQueue, start: AdminEventsReply, resumeAfter: string | undefined, signal: AbortSignal): Promise<void> {
    const deadline = Date.now() + this.config.RELAY_STREAM_MAX_MS;
    const written = new Set<string>();
    let last = resumeAfter ?? start.position;
    const send = async (item: PositionedTaskEvent): Promise<void> => {
      written.add(item.position);
      if (written.size > WRITTEN_MEMORY) written.delete(written.values().next().value as string);
      if (BigInt(item.position) > BigInt(last)) last = item.position;
      await writer.write(`id: ${item.position}\nevent: task\ndata: ${JSON.stringify(renderAdminEvent(item))}\n\n`);
    };
    const replay = async (after: string, first?: AdminEventsReply): Promise<void> => {
      let cursor = after;
      for (let page = first ?? (await this.read(cursor)); ; page = await this.read(cursor)) {
        for (const item of page.events) {
          cursor = item.position;
          if (!written.has(item.position)) await send(item);
        }
        if (!page.has_more || !writer.open) return;
      }
    };
    await writer.write(`id: ${last}\nevent: ready\ndata: ${JSON.stringify({ position: last })}\n\n`);
    if (resumeAfter !== undefined) await replay(resumeAfter, start);
    while (writer.open) {
      const next = await queue.next(deadline, signal);
      if (next.kind === 'deadline' || next.kind === 'aborted') return;
      if (next.kind === 'overflow') {
        throw new RelayError(
          'overloaded',
          `The stream fell more than ${STREAM_BUFFER_LIMIT} events behind; connect again with Last-Event-ID: ${last} to read on from there`,
          { last_event_id: last },
        );
      }
      if (next.kind === 'resync') {
        // Events of different tasks may become visible out of position order: read again from the oldest one remembered.
        const oldest = written.size > 0 ? [...written].reduce((a, b) => (BigInt(a) < BigInt(b) ? a : b)) : last;
        await replay(oldest);
        continue;
      }
      if (!written.has(next.item.position)) await send(next.item);
    }
  }

  private read(after: string | undefined): Promise<AdminEventsReply> {
    return this.rpc.request(ADMIN_TASKS_SUBJECTS.events, after !== undefined ? { after_position: after } : {});
  }
}

@Controller('admin/events')
@UseGuards(AdminTokenGuard)
@UseFilters(AdminExceptionFilter)
export class AdminEventsController {
  constructor(@Inject(AdminEventStreams) private readonly streams: AdminEventStreams) {}

  @Get()
  stream(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.streams.serve(request, reply);
  }
}
