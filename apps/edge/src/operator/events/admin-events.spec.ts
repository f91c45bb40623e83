import { EventEmitter } from 'node:events';
import { jest } from '@jest/globals';
import type { FastifyReply } from 'fastify';
import type { PositionedTaskEvent, TaskEvent } from '@app/contracts';
import type { NatsRpcClient } from '@app/messaging';
import type { EdgeConfig } from '../../edge.config';
import { SseWriter } from '../../endpoint/sse-writer';
import type { RequestMetrics } from '../../metrics/request-metrics';
import { STREAM_BUFFER_LIMIT } from '../../streams/event-queue';
import type { FeedListener, TaskEventFeed } from '../../streams/task-event-feed';
import type { AdminEventLimits } from './admin-event-limits';
import { ADMIN_EVENTS_FRAMING, AdminEventStreams } from './admin-events';

function event(position: number): PositionedTaskEvent {
  const payload: TaskEvent = {
    schema_version: 1,
    event_id: `e-${position}`,
    type: 'created',
    task_id: `T${position}`,
    context_id: 'c-1',
    sender: 'alice@acme',
    recipient: 'bob@acme',
    state: 'pending',
    sequence_no: 1,
    occurred_at: '2026-01-01T00:00:00.000Z',
    task: { intent: 'inform', summary: 's', message_count: 1, latest_message: null, result_summary: null, reason: null },
  };
  return { position: String(position), event: payload };
}

/** A response whose socket takes writes only while `accepting`, and drains when told to. */
class SlowSocket extends EventEmitter {
  readonly chunks: string[] = [];
  accepting = false;
  destroyed = false;
  writableEnded = false;
  writableNeedDrain = false;
  writableLength = 0;
  writeHead(): void {}
  flushHeaders(): void {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    this.writableNeedDrain = !this.accepting;
    return this.accepting;
  }
  drain(): void {
    this.writableNeedDrain = false;
    this.emit('drain');
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

/** The admin stream written to `socket` as the controller writes it: through the edge's SSE writer. */
function serve(service: AdminEventStreams, socket: SlowSocket, resumeAfter?: string): Promise<void> {
  const config = { RELAY_STREAM_STALL_MS: 60_000 } as EdgeConfig;
  const metrics = { streamOpened: () => undefined, streamClosed: () => undefined, streamStalled: () => undefined, watchStreamBuffers: () => undefined };
  const writer = new SseWriter(config, metrics as unknown as RequestMetrics);
  const reply = { hijack: () => undefined, raw: socket, getHeaders: () => ({ 'cache-control': 'no-store' }) } as unknown as FastifyReply;
  return service.open('console:s1', resumeAfter).then((stream) => writer.write(reply, stream, ADMIN_EVENTS_FRAMING));
}

/** Limits that never refuse and never make a replay wait. */
const UNBOUNDED = { reserve: () => () => undefined, pace: async () => undefined } as unknown as AdminEventLimits;

function streams(
  rpc = { request: async () => ({ events: [], has_more: false, position: '100' }) } as unknown as NatsRpcClient,
  limits = UNBOUNDED,
): { service: AdminEventStreams; push: (item: PositionedTaskEvent) => void } {
  let live: FeedListener | undefined;
  const feed = {
    followAll: (listener: FeedListener) => {
      live = listener;
      return () => (live = undefined);
    },
    onReconnect: () => () => undefined,
  } as unknown as TaskEventFeed;
  const config = { RELAY_STREAM_MAX_MS: 60_000, RELAY_STREAM_BUFFER_BYTES: 64 * 1024 * 1024 } as EdgeConfig;
  return { service: new AdminEventStreams(rpc, feed, config, limits), push: (item) => live?.(item) };
}

async function until(condition: () => boolean): Promise<void> {
  for (let attempt = 0; attempt < 1000 && !condition(); attempt++) await new Promise((resolve) => setImmediate(resolve));
  expect(condition()).toBe(true);
}

describe('AdminEventStreams', () => {
  it('writes nothing more while the socket has not drained, then ends past the queue bound naming where to resume', async () => {
    const { service, push } = streams();
    const socket = new SlowSocket();
    const served = serve(service, socket);
    await until(() => socket.chunks.length === 1);
    expect(socket.chunks[0]).toBe('id: 100\nevent: ready\ndata: {"position":"100"}\n\n');

    // The client reads nothing: the stream waits on the socket while the live events queue up.
    for (let position = 101; position <= 100 + STREAM_BUFFER_LIMIT + 5; position++) push(event(position));
    await new Promise((resolve) => setImmediate(resolve));
    expect(socket.chunks).toHaveLength(1);

    socket.accepting = true;
    socket.drain();
    await served;
    const written = socket.chunks.filter((chunk) => chunk.includes('event: task'));
    expect(written).toHaveLength(STREAM_BUFFER_LIMIT);
    const last = socket.chunks[socket.chunks.length - 1];
    expect(last.startsWith('event: error\n')).toBe(true);
    expect(JSON.parse(last.split('data: ')[1])).toMatchObject({
      error: { reason: 'overloaded', data: { last_event_id: String(100 + STREAM_BUFFER_LIMIT) } },
    });
    expect(socket.writableEnded).toBe(true);
  });

  it('writes each live event once, as the console reads it', async () => {
    const { service, push } = streams();
    const socket = new SlowSocket();
    socket.accepting = true;
    const served = serve(service, socket);
    await until(() => socket.chunks.length === 1);
    push(event(101));
    push(event(101));
    push(event(102));
    await until(() => socket.chunks.length === 3);
    expect(socket.chunks.slice(1).map((chunk) => chunk.split('\n')[0])).toEqual(['id: 101', 'id: 102']);
    expect(JSON.parse(socket.chunks[1].split('data: ')[1])).toEqual({
      position: '101',
      event: 'created',
      task_id: 'T101',
      state: 'pending',
      intent: 'inform',
      summary: 's',
      sender: 'alice@acme',
      recipient: 'bob@acme',
      at: '2026-01-01T00:00:00.000Z',
    });
    socket.emit('close');
    await served;
  });

  it('reads each replay page only at its turn, the next one once the page before is written', async () => {
    const turns: (() => void)[] = [];
    const pace = jest.fn((session: string) => {
      expect(session).toBe('console:s1');
      return new Promise<void>((resolve) => turns.push(resolve));
    });
    const reads: string[] = [];
    const request = jest.fn(async (_subject: string, payload: { after_position?: string }) => {
      const after = Number(payload.after_position);
      reads.push(String(after));
      return { events: [event(after + 1), event(after + 2)], has_more: after + 2 < 106, position: '106' };
    });
    const { service } = streams({ request } as unknown as NatsRpcClient, { reserve: () => () => undefined, pace } as unknown as AdminEventLimits);
    const socket = new SlowSocket();
    socket.accepting = true;
    const served = serve(service, socket, '100');
    for (const [turn, after] of [
      [1, '100'],
      [2, '102'],
      [3, '104'],
    ] as const) {
      await until(() => turns.length === turn);
      // Waiting for its turn: the page is not read yet.
      expect(reads).toHaveLength(turn - 1);
      turns[turn - 1]();
      await until(() => reads.length === turn);
      expect(reads[turn - 1]).toBe(after);
    }
    await until(() => socket.chunks.length === 7);
    expect(socket.chunks.slice(1).map((chunk) => chunk.split('\n')[0])).toEqual(['id: 101', 'id: 102', 'id: 103', 'id: 104', 'id: 105', 'id: 106']);
    expect(pace).toHaveBeenCalledTimes(3);
    socket.emit('close');
    await served;
  });

  it('frees its slot when it ends, and at once when it cannot open', async () => {
    const releases: string[] = [];
    const limits = {
      reserve: (session: string) => () => releases.push(session),
      pace: async () => undefined,
    } as unknown as AdminEventLimits;
    const failing = {
      request: async () => {
        throw new Error('tasks unreachable');
      },
    } as unknown as NatsRpcClient;
    await expect(streams(failing, limits).service.open('console:s2', '5')).rejects.toThrow('tasks unreachable');
    expect(releases).toEqual(['console:s2']);
    const { service } = streams(undefined, limits);
    const socket = new SlowSocket();
    socket.accepting = true;
    const served = serve(service, socket);
    await until(() => socket.chunks.length === 1);
    expect(releases).toEqual(['console:s2']);
    socket.emit('close');
    await served;
    expect(releases).toEqual(['console:s2', 'console:s1']);
  });
});
