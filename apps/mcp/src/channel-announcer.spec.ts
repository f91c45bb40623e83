import { jest } from '@jest/globals';
import type { InboxEvent } from '@app/relay-client';
import { ChannelAnnouncer } from './channel-announcer';
import type { ChannelNotification } from './channel-events';

const FRANK = 'frank@acme';
const BOB = 'bob@acme';
const BURST_MS = 1000;

let position = 100;

/** A live inbox event of a task Bob sent Frank. */
function event(type: string, fields: Partial<InboxEvent> = {}): InboxEvent {
  position += 1;
  return {
    id: String(position),
    event: type,
    task_id: 'T1',
    status: { state: 'pending' },
    sender: BOB,
    recipient: FRANK,
    intent: 'ask_question',
    summary: 'Review the /users refactor',
    message: null,
    result_summary: null,
    reason: null,
    ...fields,
  };
}

function message(from: string, body: string, sequenceNo = 1): InboxEvent['message'] {
  return { message_id: `M${sequenceNo}`, sequence_no: sequenceNo, from, body };
}

describe('ChannelAnnouncer', () => {
  let sent: ChannelNotification[];
  let errors: unknown[];
  let announcer: ChannelAnnouncer;

  beforeEach(() => {
    jest.useFakeTimers();
    sent = [];
    errors = [];
    announcer = new ChannelAnnouncer({
      ownHandle: async () => FRANK,
      send: async (notification) => void sent.push(notification),
      burstMs: BURST_MS,
      onError: (error) => errors.push(error),
    });
  });

  afterEach(() => {
    announcer.close();
    jest.useRealTimers();
  });

  /** Hands the events over and lets the burst window pass. */
  async function deliver(...events: InboxEvent[]): Promise<void> {
    for (const each of events) announcer.accept(each);
    await announcer.settled();
    jest.advanceTimersByTime(BURST_MS);
    await Promise.resolve();
  }

  it('announces a new handoff addressed to the agent once the burst window has passed', async () => {
    announcer.accept(event('created', { message: message(BOB, 'Can you review the /users refactor?') }));
    await announcer.settled();
    expect(sent).toHaveLength(0);

    jest.advanceTimersByTime(BURST_MS);
    await Promise.resolve();

    expect(sent).toHaveLength(1);
    expect(sent[0].meta).toEqual({ task_id: 'T1', event: 'handoff', from: BOB, state: 'pending' });
    expect(sent[0].content).toContain('New handoff T1 from bob@acme');
    expect(sent[0].content).toContain('> Can you review the /users refactor?');
    expect(sent[0].content).toContain('get_thread {"task_id": "T1"}');
    expect(errors).toEqual([]);
  });

  it('collapses a burst of events on one task into one notification carrying the latest state', async () => {
    await deliver(
      event('created', { message: message(BOB, 'First', 1) }),
      event('message_appended', { message: message(BOB, 'Second', 2) }),
      event('message_appended', { message: message(BOB, 'Third', 3) }),
    );

    expect(sent).toHaveLength(1);
    expect(sent[0].meta.event).toBe('handoff');
    expect(sent[0].content).toContain('> Third');
    expect(sent[0].content).toContain('3 messages from them');
    expect(sent[0].content).not.toContain('> First');
  });

  it('gives each task of a burst its own notification, and a later burst another one', async () => {
    await deliver(event('created', { task_id: 'T1' }), event('created', { task_id: 'T2' }));
    expect(sent.map((each) => each.meta.task_id).sort()).toEqual(['T1', 'T2']);

    await deliver(event('message_appended', { task_id: 'T1', status: { state: 'accepted' }, message: message(BOB, 'Any news?', 2) }));
    expect(sent).toHaveLength(3);
    expect(sent[2].meta).toEqual({ task_id: 'T1', event: 'reply', from: BOB, state: 'accepted' });
  });

  it("says nothing of the agent's own actions", async () => {
    await deliver(
      event('accepted', { status: { state: 'accepted' } }),
      event('message_appended', { status: { state: 'accepted' }, message: message(FRANK, 'On it', 2) }),
      event('input_required', { status: { state: 'input_required' }, message: message(FRANK, 'Which branch?', 3) }),
      event('completed', { status: { state: 'completed' }, result_summary: 'Done' }),
      event('created', { task_id: 'T9', sender: FRANK, recipient: BOB, message: message(FRANK, 'Please look', 1) }),
    );
    expect(sent).toEqual([]);
  });

  it("takes the agent's own actions in a burst as the task's latest state without announcing them", async () => {
    await deliver(
      event('message_appended', { status: { state: 'pending' }, message: message(BOB, 'One more thing', 2) }),
      event('accepted', { status: { state: 'accepted' } }),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0].meta).toMatchObject({ event: 'reply', state: 'accepted' });
  });

  it('announces what the other party does to a handoff the agent sent', async () => {
    const sentByFrank = { sender: FRANK, recipient: BOB };
    await deliver(event('input_required', { ...sentByFrank, task_id: 'Q', status: { state: 'input_required' }, message: message(BOB, 'Which branch?', 2) }));
    await deliver(event('completed', { ...sentByFrank, task_id: 'C', status: { state: 'completed' }, result_summary: 'Merged in #42' }));
    await deliver(event('rejected', { ...sentByFrank, task_id: 'D', status: { state: 'rejected' }, reason: 'Not my area' }));
    await deliver(event('failed', { ...sentByFrank, task_id: 'F', status: { state: 'failed' }, reason: 'Tests never pass' }));

    expect(sent.map((each) => [each.meta.task_id, each.meta.event, each.meta.from])).toEqual([
      ['Q', 'input_request', BOB],
      ['C', 'completed', BOB],
      ['D', 'declined', BOB],
      ['F', 'failed', BOB],
    ]);
    expect(sent[0].content).toContain('> Which branch?');
    expect(sent[1].content).toContain('> Merged in #42');
    expect(sent[2].content).toContain('> Not my area');
  });

  it('announces that the sender cancelled a handoff sent to the agent', async () => {
    await deliver(event('canceled', { status: { state: 'cancelled' } }));
    expect(sent).toHaveLength(1);
    expect(sent[0].meta).toEqual({ task_id: 'T1', event: 'cancelled', from: BOB, state: 'cancelled' });
  });

  it('keeps quiet about an accept and an artifact by the other party', async () => {
    const sentByFrank = { sender: FRANK, recipient: BOB };
    await deliver(
      event('accepted', { ...sentByFrank, status: { state: 'accepted' } }),
      event('artifact_updated', { ...sentByFrank, status: { state: 'accepted' } }),
    );
    expect(sent).toEqual([]);
  });

  it('announces an event once when the stream replays it after a reconnect', async () => {
    const created = event('created', { message: message(BOB, 'Hello') });
    await deliver(created);
    await deliver({ ...created }, { ...created });
    expect(sent).toHaveLength(1);
  });

  it('sends nothing once closed', async () => {
    announcer.accept(event('created'));
    await announcer.settled();
    announcer.close();
    jest.advanceTimersByTime(BURST_MS);
    await Promise.resolve();
    expect(sent).toEqual([]);
  });

  it('reports an event whose own handle cannot be learnt, and goes on with the next', async () => {
    let calls = 0;
    const flaky = new ChannelAnnouncer({
      ownHandle: async () => {
        calls += 1;
        if (calls === 1) throw new Error('relay unreachable');
        return FRANK;
      },
      send: async (notification) => void sent.push(notification),
      burstMs: BURST_MS,
      onError: (error) => errors.push(error),
    });
    flaky.accept(event('created', { task_id: 'A' }));
    flaky.accept(event('created', { task_id: 'B' }));
    await flaky.settled();
    jest.advanceTimersByTime(BURST_MS);
    await Promise.resolve();
    flaky.close();

    expect(errors.map((error) => (error as Error).message)).toEqual(['relay unreachable']);
    expect(sent.map((each) => each.meta.task_id)).toEqual(['B']);
  });
});
