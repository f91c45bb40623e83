import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { RelayError, type AgentIdentity } from '@app/contracts';
import { EdgeConfig } from '../edge.config';
import { asRelayError } from '../jsonrpc/json-rpc-errors';
import type { JsonRpcEventStream } from '../jsonrpc/json-rpc.types';
import { RequestMetrics } from '../metrics/request-metrics';

/** An SSE comment line sent on an idle stream, so that proxies and clients keep it open. */
export const SSE_KEEP_ALIVE_MS = 15000;

/** How one binding frames the items of a stream and an error that ends it. */
export interface SseFraming {
  /** The JSON of one `data:` event for an item the stream yields. */
  event(item: unknown): unknown;
  /** The JSON of the `event: error` sent when the stream fails after it started. */
  error(error: RelayError): unknown;
}

/**
 * The one Server-Sent Events writer of the agent endpoints (JSON-RPC and HTTP+JSON): the open
 * streams, the per-agent bound on them (RELAY_STREAMS_PER_AGENT), and the writing of a stream
 * result. Closing the connection stops the stream's work; shutting down ends every stream.
 */
@Injectable()
export class SseWriter implements OnModuleDestroy {
  private readonly logger = new Logger(SseWriter.name);
  private readonly streams = new Set<AbortController>();
  /** Open (or opening) streams per agent id. */
  private readonly streamsPerAgent = new Map<string, number>();

  constructor(
    @Inject(EdgeConfig) private readonly config: EdgeConfig,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
  ) {}

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
   * Writes a stream result: one `data:` event per item, an error once the stream has started as an
   * `event: error`, a `: keep-alive` comment when idle.
   */
  async write(reply: FastifyReply, stream: JsonRpcEventStream, framing: SseFraming, onClosed?: () => void): Promise<void> {
    reply.hijack();
    const raw = reply.raw;
    const controller = new AbortController();
    const onClose = (): void => {
      controller.abort();
      onClosed?.();
    };
    raw.on('close', onClose);
    this.streams.add(controller);
    this.metrics.streamOpened();
    const open = (): boolean => !controller.signal.aborted && !raw.destroyed && !raw.writableEnded;
    const headers: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
    raw.writeHead(200, {
      ...headers,
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    raw.flushHeaders();
    const keepAlive = setInterval(() => {
      if (open()) raw.write(': keep-alive\n\n');
    }, SSE_KEEP_ALIVE_MS);
    try {
      for await (const item of stream.open(controller.signal)) {
        if (!open()) break;
        raw.write(`data: ${JSON.stringify(framing.event(item))}\n\n`);
      }
    } catch (error) {
      if (open()) {
        raw.write(`event: error\ndata: ${JSON.stringify(framing.error(asRelayError(error)))}\n\n`);
      } else {
        this.logger.debug({ err: error }, 'error after the stream was closed');
      }
    } finally {
      clearInterval(keepAlive);
      raw.off('close', onClose);
      this.streams.delete(controller);
      this.metrics.streamClosed();
      if (!raw.writableEnded) raw.end();
    }
  }
}
