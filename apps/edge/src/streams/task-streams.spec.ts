import type { AgentIdentity, PositionedTaskEvent, TaskEvent, TaskEventsRequest, TaskView } from '@app/contracts';
import type { NatsRpcClient } from '@app/messaging';
import type { DirectoryLookups } from '../directory/directory-lookups';
import type { EdgeConfig } from '../edge.config';
import { StreamIds } from './stream-ids';
import type { FeedListener, TaskEventFeed } from './task-event-feed';
import { TaskStreams } from './task-streams';

const caller = { id: 'a-1', handle: 'alice@acme', name: 'Alice', role: null } as unknown as AgentIdentity;
const ids = new StreamIds({ RELAY_STREAM_ID_KEY: Buffer.alloc(32, 7).toString('base64') } as EdgeConfig);
/** The id the caller's stream of T1 shows for a position. */
const id = (position: number): string => ids.encode(String(position), caller.id, { task: 'T1' });

function event(position: number, type: TaskEvent['type'], state: TaskEvent['state']): PositionedTaskEvent {
  return {
    position: String(position),
    event: {
      schema_version: 1,
      event_id: `e-${position}`,
      type,
      task_id: 'T1',
      context_id: 'c-1',
      sender: 'alice@acme',
      recipient: 'bob@acme',
      state,
      sequence_no: null,
      occurred_at: '2026-01-01T00:00:00.000Z',
      task: { intent: 'inform', summary: 's', message_count: 1, latest_message: null, result_summary: null, reason: null },
    },
  };
}

/** The tasks service's log of task T1 and the edge's feed, both in the test's hands. */
function harness(log: PositionedTaskEvent[], snapshotPosition: string) {
  let live: FeedListener | undefined;
  let reconnect: (() => void) | undefined;
  const requests: TaskEventsRequest[] = [];
  const rpc = {
    request: async (_subject: string, request: TaskEventsRequest) => {
      requests.push(request);
      const after = BigInt(request.after_position ?? snapshotPosition);
      const events = request.after_position === undefined ? [] : log.filter((item) => BigInt(item.position) > after);
      return {
        events,
        has_more: false,
        position: snapshotPosition,
        ...(request.snapshot
          ? {
              task: {
                id: 'T1',
                context_id: 'c-1',
                state: 'pending',
                intent: 'inform',
                proposed_action: null,
                sender: { id: 'a-1', handle: 'alice@acme' },
                recipient: { id: 'b-1', handle: 'bob@acme' },
                messages: [],
                artifacts: [],
                metadata: {},
                chain: { parent_task_id: null, root_task_id: 'T1', depth: 0 },
              } as unknown as TaskView,
            }
          : {}),
      };
    },
  } as unknown as NatsRpcClient;
  const feed = {
    followTask: (_taskId: string, listener: FeedListener) => {
      live = listener;
      return () => (live = undefined);
    },
    onReconnect: (listener: () => void) => {
      reconnect = listener;
      return () => (reconnect = undefined);
    },
  } as unknown as TaskEventFeed;
  const streams = new TaskStreams(rpc, feed, {} as DirectoryLookups, { RELAY_STREAM_MAX_MS: 60_000 } as EdgeConfig, ids);
  return { streams, requests, live: (item: PositionedTaskEvent) => live?.(item), reconnect: () => reconnect?.(), following: () => live !== undefined };
}

describe('TaskStreams', () => {
  it('replays after Last-Event-ID, then writes only live events past what it wrote, and lets go of the feed at the end', async () => {
    const log = [event(5, 'created', 'pending'), event(7, 'accepted', 'accepted'), event(9, 'message_appended', 'accepted')];
    const fake = harness(log, '9');
    const stream = await fake.streams.open({ caller, endpointHandle: null, taskId: 'T1', version: '1.0', kind: 'subscribe', lastEventId: id(5) });
    const items = stream.open(new AbortController().signal)[Symbol.asyncIterator]();
    expect((await items.next()).value?.id).toBe(id(7));
    expect((await items.next()).value?.id).toBe(id(9));
    fake.live(event(9, 'message_appended', 'accepted'));
    fake.live(event(12, 'completed', 'completed'));
    const last = await items.next();
    expect(last.value).toMatchObject({ id: id(12), event: { statusUpdate: { status: { state: 'TASK_STATE_COMPLETED' } } } });
    expect((await items.next()).done).toBe(true);
    expect(fake.following()).toBe(false);
  });

  it('reads the log again after a reconnect, so that events published meanwhile are not lost', async () => {
    const log = [event(3, 'created', 'pending')];
    const fake = harness(log, '3');
    const stream = await fake.streams.open({ caller, endpointHandle: null, taskId: 'T1', version: '1.0', kind: 'subscribe' });
    const items = stream.open(new AbortController().signal)[Symbol.asyncIterator]();
    expect((await items.next()).value).toMatchObject({ id: id(3), event: { task: { id: 'T1' } } });
    // Published while the edge's connection was down: never seen live.
    log.push(event(4, 'accepted', 'accepted'), event(6, 'completed', 'completed'));
    fake.reconnect();
    expect((await items.next()).value?.id).toBe(id(4));
    expect((await items.next()).value?.id).toBe(id(6));
    expect((await items.next()).done).toBe(true);
    expect(fake.requests.at(-1)).toMatchObject({ task_id: 'T1', after_position: '3' });
  });
});
