import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RelayError, type AgentIdentity } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { asRelayError } from '../errors/json-rpc-errors';
import type { EventStream } from '../streams/task-streams';
import { RequestMetrics } from '../metrics/request-metrics';

/** An SSE comment line sent on an idle stream, so that proxies and clients keep it open. */
export const SSE_KEEP_ALIVE_MS = 15000;

/** How one binding frames the items of a stream and an error that ends it. */
export interface SseFraming {
  /** The JSON of one `data:` event for an item the stream yields. */
  event(item: unknown): unknown;
  /** The SSE `event:` name of an item, when the binding names its events (unnamed: `message`). */
  name?(item: unknown): string;
  /** The JSON of the `event: error` sent when the stream fails after it started. */
  error(error: RelayError): unknown;
}

/**
 * The one Server-Sent Events writer of the agent endpoints (JSON-RPC and HTTP+JSON) and the console's event stream: the open
 * streams, the per-agent bound on them (RELAY_STREAMS_PER_AGENT), and the writing of a stream
 * result. Closing the connection stops the stream's work; shutting down ends every stream.
 */
@Injectable()
export class SseWriter implements OnModuleDestroy {
  private readonly logger = new Logger(SseWriter.name);
  private readonly streams = new Set<AbortController>();
  /** What each open stream holds unsent: its own buffer and its socket's. */
  private readonly unsent = new Map<AbortController, () => number>();
  /** Open (or opening) streams per agent id. */
  private readonly streamsPerAgent = new Map<string, number>();

  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
  ) {
    metrics.watchStreamBuffers(() => {
      let bytes = 0;
      for (const read of this.unsent.values()) bytes += read();
      return bytes;
    });
  }

  onModuleDestroy(): void {
    for (const controller of this.streams) controller.abort();
  }

  /** Takes one of the caller's stream slots, or throws `rate_limited` (429); the returned release is idempotent. */
  reserveSlot(caller: AgentIdentity): () => void {
    const limit = this.config.RELAY_STREAMS_PER_AGENT;
    const open = this.streamsPerAgent.get(caller.id) ?? 0;
    if (open >= limit) {
      throw new RelayError(
        'rate_limited',
        `At most ${limit} streams per agent may be open at once (RELAY_STREAMS_PER_AGENT); close one before opening another`,
        {
          limit,
          limit_name: 'RELAY_STREAMS_PER_AGENT',
        },
      );
    }
    this.streamsPerAgent.set(caller.id, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const remaining = (this.streamsPerAgent.get(caller.id) ?? 1) - 1;
      if (remaining > 0) this.streamsPerAgent.set(caller.id, remaining);
      else this.streamsPerAgent.delete(caller.id);
    };
  }

  /**
   * Writes a stream result: one `data:` event per item with its id (opaque: StreamIds) as the SSE `id:`, an error
   * once the stream has started as an `event: error`, a `: keep-alive` comment when idle. The
   * stream is released however it ends, even when its headers cannot be written.
   *
   * Writing follows the client: after a write the socket could not take whole, the next item waits
   * for it to drain (meanwhile the stream's own bounded buffer takes the live events), and a client
   * that reads nothing for RELAY_STREAM_STALL_MS is disconnected. What one stream holds is bounded
   * by RELAY_STREAM_BUFFER_BYTES plus the item being written.
   */
  async write(reply: FastifyReply, stream: EventStream, framing: SseFraming, onClosed?: () => void): Promise<void> {
    reply.hijack();
    const raw = reply.raw;
    const controller = new AbortController();
    const onClose = (): void => {
      controller.abort();
      onClosed?.();
    };
    raw.on('close', onClose);
    this.streams.add(controller);
    this.unsent.set(controller, () => stream.bufferedBytes() + raw.writableLength);
    this.metrics.streamOpened();
    const open = (): boolean => !controller.signal.aborted && !raw.destroyed && !raw.writableEnded;
    let keepAlive: NodeJS.Timeout | undefined;
    try {
      const headers: Record<string, string | number | string[]> = {};
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
      raw.writeHead(200, {
        ...headers,
        'content-type': 'text/event-stream',
        // A route that forbids caching (the admin API's no-store) keeps its own rule.
        'cache-control': String(headers['cache-control'] ?? 'no-cache'),
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      raw.flushHeaders();
      keepAlive = setInterval(() => {
        if (open()) raw.write(': keep-alive\n\n');
      }, SSE_KEEP_ALIVE_MS);
      for await (const item of stream.open(controller.signal)) {
        if (!open()) break;
        const name = framing.name ? `event: ${framing.name(item.event)}\n` : '';
        const whole = raw.write(`id: ${item.id}\n${name}data: ${JSON.stringify(framing.event(item.event))}\n\n`);
        if (!whole && !(await this.drained(raw, controller.signal))) {
          this.logger.warn({ last_event_id: item.id, unsent_bytes: raw.writableLength }, 'stream closed: its client stopped reading');
          this.metrics.streamStalled();
          raw.destroy();
          break;
        }
      }
    } catch (error) {
      if (open()) {
        raw.write(`event: error\ndata: ${JSON.stringify(framing.error(asRelayError(error)))}\n\n`);
      } else {
        this.logger.debug({ err: error }, 'error after the stream was closed');
      }
    } finally {
      stream.release();
      clearInterval(keepAlive);
      raw.off('close', onClose);
      this.streams.delete(controller);
      this.unsent.delete(controller);
      this.metrics.streamClosed();
      if (!raw.writableEnded && !raw.destroyed) raw.end();
    }
  }

  /** Whether the socket drained within RELAY_STREAM_STALL_MS (false also when the stream was closed meanwhile). */
  private drained(raw: NodeJS.WritableStream & { destroyed: boolean }, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted || raw.destroyed) return Promise.resolve(false);
    return new Promise((resolve) => {
      const finish = (outcome: boolean): void => {
        clearTimeout(timer);
        raw.off('drain', onDrain);
        signal.removeEventListener('abort', onAbort);
        resolve(outcome);
      };
      const onDrain = (): void => finish(true);
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(false), this.config.RELAY_STREAM_STALL_MS);
      raw.on('drain', onDrain);
      signal.addEventListener('abort', onAbort);
    });
  }
}
