import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { loadConfig } from '@app/config';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from '../../edge.config';
import { AdminEventLimits } from './admin-event-limits';

/** What EdgeConfig requires beside the values a test sets. */
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

function limits(env: Record<string, string> = {}): AdminEventLimits {
  return new AdminEventLimits(
    loadConfig(EdgeConfig, {
      ...EDGE_REQUIRED,
      RELAY_ADMIN_EVENT_STREAMS_PER_SESSION: '2',
      RELAY_ADMIN_EVENT_STREAMS_PER_EDGE: '3',
      RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND: '4',
      RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND_PER_EDGE: '10',
      ...env,
    }),
  );
}

function refusalOf(reserve: () => unknown): RelayError {
  try {
    reserve();
  } catch (error) {
    if (error instanceof RelayError) return error;
    throw error;
  }
  throw new Error('not refused');
}

describe('AdminEventLimits', () => {
  it('refuses a session past its streams with 429 naming the limit, and takes it again once one is released (once)', () => {
    const bounds = limits();
    const first = bounds.reserve('console:a');
    bounds.reserve('console:a');
    const refused = refusalOf(() => bounds.reserve('console:a'));
    expect(refused).toMatchObject({
      reason: 'rate_limited',
      data: { limit: 2, limit_name: 'RELAY_ADMIN_EVENT_STREAMS_PER_SESSION', retry_after_seconds: 5 },
    });
    expect(refused.message).toMatch(/At most 2 admin event streams per console session/);
    first();
    first();
    expect(bounds.openStreams).toBe(1);
    expect(() => bounds.reserve('console:a')).not.toThrow();
    expect(() => bounds.reserve('console:a')).toThrow(RelayError);
  });

  it('refuses any session past the edge-wide bound', () => {
    const bounds = limits();
    bounds.reserve('console:a');
    bounds.reserve('console:a');
    const release = bounds.reserve('admin token');
    expect(refusalOf(() => bounds.reserve('console:b'))).toMatchObject({ data: { limit: 3, limit_name: 'RELAY_ADMIN_EVENT_STREAMS_PER_EDGE' } });
    release();
    expect(() => bounds.reserve('console:b')).not.toThrow();
  });

  it("spaces a session's replay pages by its pace, whatever its streams, and keeps the pace past a reconnect", () => {
    const bounds = limits({ RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND_PER_EDGE: '1000' });
    const release = bounds.reserve('console:a');
    expect(bounds.sessionTurn('console:a', 1000)).toBe(1000);
    expect(bounds.sessionTurn('console:a', 1000)).toBe(1250);
    expect(bounds.sessionTurn('console:a', 1010)).toBe(1500);
    // Another session has its own pace.
    expect(bounds.sessionTurn('console:b', 1010)).toBe(1010);
    release();
    bounds.reserve('console:a', 1020);
    expect(bounds.sessionTurn('console:a', 1020)).toBe(1750);
    // Once the pace has run out, a page may be read at once.
    expect(bounds.sessionTurn('console:a', 5000)).toBe(5000);
  });

  it("spaces all sessions' pages by the edge's pace", () => {
    const bounds = limits();
    expect(bounds.edgeTurn(0)).toBe(0);
    expect(bounds.edgeTurn(0)).toBe(100);
    expect(bounds.edgeTurn(50)).toBe(200);
    expect(bounds.edgeTurn(1000)).toBe(1000);
  });

  it('paces a replay in real time and returns at once when aborted', async () => {
    const bounds = limits({ RELAY_ADMIN_EVENT_REPLAY_PAGES_PER_SECOND: '20' });
    bounds.reserve('console:a');
    const started = Date.now();
    await bounds.pace('console:a');
    await bounds.pace('console:a');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const aborted = new AbortController();
    const waiting = bounds.pace('console:a', aborted.signal);
    aborted.abort();
    await waiting;
  });
});
