import type { RelayClient } from './relay-client';
import type { InboxEvent } from './relay-types';
import { eventually } from '../../../test/support/eventually';
import { LiveInbox } from './live-inbox';
import { RelayClientError } from './relay-client-error';

/** A relay whose live inbox sends `streams[n]` on the n-th watch (or refuses it with that error), then stays open until aborted. */
function relayStreaming(streams: Array<InboxEvent[] | Error>): { client: RelayClient; resumedFrom: Array<string | undefined> } {
  const resumedFrom: Array<string | undefined> = [];
  const client = {
    async *watchInbox(options: { lastEventId?: string; signal?: AbortSignal; onOpen?: () => void }): AsyncGenerator<InboxEvent> {
      const events = streams[resumedFrom.length] ?? [];
      resumedFrom.push(options.lastEventId);
      if (events instanceof Error) throw events;
      options.onOpen?.();
      yield* events;
      if (resumedFrom.length < streams.length) return;
      await new Promise<void>((resolve) => options.signal?.addEventListener('abort', () => resolve(), { once: true }));
    },
  } as unknown as RelayClient;
  return { client, resumedFrom };
}

const event = (id: string, type = 'message_appended'): InboxEvent => ({ id, event: type, task_id: 'T1' });

describe('LiveInbox', () => {
  it('hands every task event to its listeners, not ready, and goes on after the stream ends with the last id', async () => {
    const relay = relayStreaming([[event('10', 'ready'), event('11', 'created')], [event('12')]]);
    const live = new LiveInbox(relay.client, 10);
    const seen: string[] = [];
    live.onEvent((each) => seen.push(each.id));
    live.start();
    try {
      await eventually(() => expect(seen).toHaveLength(2));
      expect(seen).toEqual(['11', '12']);
      expect(relay.resumedFrom).toEqual([undefined, '11']);
    } finally {
      live.stop();
    }
  });

  it('watches again without the id when the relay refuses it as a resume id', async () => {
    const refused = new RelayClientError('relay_error', 'invalid_params', "Last-Event-ID 'x' is not an event id of your live inbox", {
      code: -32602,
      data: { reason: 'invalid_params', field: 'Last-Event-ID' },
    });
    const relay = relayStreaming([[event('a1', 'ready'), event('a2', 'created')], refused, [event('b1', 'ready'), event('b2')]]);
    const errors: unknown[] = [];
    const live = new LiveInbox(relay.client, 10, (error) => errors.push(error));
    const seen: string[] = [];
    live.onEvent((each) => seen.push(each.id));
    live.start();
    try {
      await eventually(() => expect(seen).toEqual(['a2', 'b2']));
      expect(relay.resumedFrom).toEqual([undefined, 'a2', undefined]);
      expect(errors).toEqual([refused]);
    } finally {
      live.stop();
    }
  });

  it('reports a listener that throws and keeps the stream going', async () => {
    const relay = relayStreaming([[event('1'), event('2')]]);
    const errors: unknown[] = [];
    const live = new LiveInbox(relay.client, 10, (error) => errors.push(error));
    const seen: string[] = [];
    const stop = live.onEvent(() => {
      throw new Error('listener broke');
    });
    live.onEvent((each) => seen.push(each.id));
    live.start();
    try {
      await eventually(() => expect(seen).toHaveLength(2));
      expect(errors).toEqual([new Error('listener broke'), new Error('listener broke')]);
      expect(relay.resumedFrom).toEqual([undefined]);
      stop();
    } finally {
      live.stop();
    }
  });
});
