import { jest } from '@jest/globals';
import { HeldAcks } from './held-acks';

function message(acked: string[], name: string) {
  return { ack: () => acked.push(name) };
}

describe('HeldAcks', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('sends held acks together once the hold time has passed, not before', () => {
    const acked: string[] = [];
    const acks = new HeldAcks(10, 50);
    acks.add(message(acked, 'a'));
    jest.advanceTimersByTime(30);
    acks.add(message(acked, 'b'));
    jest.advanceTimersByTime(19);
    expect(acked).toEqual([]);
    expect(acks.size).toBe(2);
    // The hold counts from the first held ack: the second does not push it back.
    jest.advanceTimersByTime(1);
    expect(acked).toEqual(['a', 'b']);
    expect(acks.size).toBe(0);
  });

  it('sends at once when the hold is full', () => {
    const acked: string[] = [];
    const acks = new HeldAcks(3, 50);
    for (const name of ['a', 'b']) acks.add(message(acked, name));
    expect(acked).toEqual([]);
    acks.add(message(acked, 'c'));
    expect(acked).toEqual(['a', 'b', 'c']);
    // Nothing is left to send when the timer of the first one would have fired.
    jest.advanceTimersByTime(100);
    expect(acked).toEqual(['a', 'b', 'c']);
  });

  it('with a hold of one, acks each event as it comes', () => {
    const acked: string[] = [];
    const acks = new HeldAcks(1, 50);
    acks.add(message(acked, 'a'));
    expect(acked).toEqual(['a']);
  });

  it('flushes on demand, and an ack that cannot be sent does not keep the others back', () => {
    const acked: string[] = [];
    const acks = new HeldAcks(10, 50);
    acks.add(message(acked, 'a'));
    acks.add({
      ack: () => {
        throw new Error('connection closed');
      },
    });
    acks.add(message(acked, 'c'));
    acks.flush();
    expect(acked).toEqual(['a', 'c']);
    expect(acks.size).toBe(0);
    expect(jest.getTimerCount()).toBe(0);
  });
});
