import { RelayError } from '@app/contracts';
import type { DirectoryLookups } from '../directory/directory-lookups';
import { CallersAtLimit, MAX_WAITING_REFUSALS, REFUSAL_INTERVAL_MS, type KnownRefusal } from './callers-at-limit';

const KEY = `ah_live_${'ABCDEFGH234567QR'.repeat(2)}`;
const OTHER_KEY = `ah_live_${'QRSTUVWX234567AB'.repeat(2)}`;
const NOW = 1_000_000;

function lookups(): DirectoryLookups & { changed: () => void } {
  const listeners: Array<() => void> = [];
  return {
    onForget: (listener: () => void) => listeners.push(listener),
    changed: () => listeners.forEach((listener) => listener()),
  } as unknown as DirectoryLookups & {
    changed: () => void;
  };
}

function refusal(until: number, calls: number[] = []): KnownRefusal {
  return {
    until,
    rateLimitLimit: 60,
    refuse: (retryAfterSeconds) => {
      calls.push(retryAfterSeconds);
      return new RelayError('rate_limited', 'limited', { retry_after_seconds: retryAfterSeconds });
    },
  };
}

describe('CallersAtLimit', () => {
  it('knows a key refused until its window ends, by either header, and no other key', () => {
    const atLimit = new CallersAtLimit(lookups());
    expect(atLimit.refusalFor({ authorization: `Bearer ${KEY}` }, NOW)).toBeUndefined();
    atLimit.remember({ authorization: `Bearer ${KEY}` }, refusal(NOW + 30_000));
    expect(atLimit.refusalFor({ 'x-api-key': KEY }, NOW)).toMatchObject({ delayMs: 0, rateLimitLimit: 60 });
    expect(atLimit.refusalFor({ authorization: `Bearer ${OTHER_KEY}` }, NOW)).toBeUndefined();
    expect(atLimit.refusalFor({}, NOW)).toBeUndefined();
    expect(atLimit.refusalFor({ authorization: 'Basic nonsense' }, NOW)).toBeUndefined();
    expect(atLimit.refusalFor({ authorization: `Bearer ${KEY}` }, NOW + 30_000)).toBeUndefined();
    expect(atLimit.size).toBe(0);
  });

  it('remembers only agent keys: a bearer token takes the whole path', () => {
    const atLimit = new CallersAtLimit(lookups());
    atLimit.remember({ authorization: 'Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln' }, refusal(NOW + 30_000));
    expect(atLimit.size).toBe(0);
  });

  it('forgets every key when the directory announces a change', () => {
    const directory = lookups();
    const atLimit = new CallersAtLimit(directory);
    atLimit.remember({ authorization: `Bearer ${KEY}` }, refusal(NOW + 30_000));
    directory.changed();
    expect(atLimit.refusalFor({ authorization: `Bearer ${KEY}` }, NOW)).toBeUndefined();
  });

  it('paces a key’s refusals one per interval, answers at once past the waiting bound, and never waits past the window', () => {
    const atLimit = new CallersAtLimit(lookups());
    const calls: number[] = [];
    atLimit.remember({ authorization: `Bearer ${KEY}` }, refusal(NOW + 60_000, calls));
    const headers = { authorization: `Bearer ${KEY}` };
    const delays = Array.from({ length: MAX_WAITING_REFUSALS + 2 }, () => atLimit.refusalFor(headers, NOW)!);
    expect(delays.slice(0, MAX_WAITING_REFUSALS + 1).map((known) => known.delayMs)).toEqual(
      Array.from({ length: MAX_WAITING_REFUSALS + 1 }, (_, index) => index * REFUSAL_INTERVAL_MS),
    );
    // The first answers at once; MAX_WAITING_REFUSALS wait; the next is answered at once.
    expect(delays[MAX_WAITING_REFUSALS + 1].delayMs).toBe(0);
    delays[1].refuse();
    expect(atLimit.refusalFor(headers, NOW)!.delayMs).toBe((MAX_WAITING_REFUSALS + 1) * REFUSAL_INTERVAL_MS);

    const closing = new CallersAtLimit(lookups());
    closing.remember(headers, refusal(NOW + 150));
    expect([closing.refusalFor(headers, NOW)!.delayMs, closing.refusalFor(headers, NOW)!.delayMs, closing.refusalFor(headers, NOW)!.delayMs]).toEqual([
      0, 100, 0,
    ]);
  });

  it('builds the refusal with the seconds left when it is answered', () => {
    const atLimit = new CallersAtLimit(lookups());
    const calls: number[] = [];
    atLimit.remember({ authorization: `Bearer ${KEY}` }, refusal(Date.now() + 12_500, calls));
    const error = atLimit.refusalFor({ authorization: `Bearer ${KEY}` })!.refuse();
    expect(error.reason).toBe('rate_limited');
    expect(calls).toEqual([13]);
  });
});
