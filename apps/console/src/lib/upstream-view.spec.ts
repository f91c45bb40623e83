import { describe, expect, it } from '@jest/globals';
import type { TimelineEntry, UpstreamCallView, UpstreamStatusView } from '../api/types';
import { changeValueText, hostOf, mergeTimeline, upstreamHealth } from './upstream-view';

function status(health: Partial<UpstreamStatusView['health']>, pending = false): UpstreamStatusView {
  return {
    handle: 'echo@acme',
    upstream: {
      card_url: 'http://127.0.0.1:4000/.well-known/agent-card.json',
      url: 'http://127.0.0.1:4000/a2a',
      binding: 'JSONRPC',
      protocol_version: '1.0',
      streaming: true,
      push_notifications: false,
      auth_scheme: 'none',
      auth_header: null,
      card_fetched_at: '2026-01-01T00:00:00.000Z',
    },
    card: {
      last_refresh_at: null,
      last_refresh_error: null,
      pending_change: pending ? { detected_at: '2026-01-01T00:00:00.000Z', card_fetched_at: '2026-01-01T00:00:00.000Z', changes: [] } : null,
      pending_upstream: null,
    },
    tls: null,
    health: { last_success_at: null, last_failure_at: null, last_failure_method: null, last_failure_reason: null, breaker: 'closed', ...health },
  };
}

const event = (position: string, at: string): TimelineEntry => ({ position, event: 'created', at, actor: null, state: 'pending' });
const call = (method: UpstreamCallView['method'], at: string): UpstreamCallView => ({
  at,
  handle: 'echo@acme',
  method,
  outcome: 'ok',
  status_code: 200,
  duration_ms: 5,
  error: null,
});

describe('upstream agents in the console', () => {
  it('names the most pressing health first: breaker open, failing, change pending, ok', () => {
    const early = '2026-01-01T00:00:01.000Z';
    const late = '2026-01-01T00:00:02.000Z';
    expect(upstreamHealth(status({ breaker: 'open', last_success_at: late, last_failure_at: early }, true))).toBe('breaker_open');
    expect(upstreamHealth(status({ last_success_at: early, last_failure_at: late }, true))).toBe('failing');
    expect(upstreamHealth(status({ last_failure_at: early }))).toBe('failing');
    expect(upstreamHealth(status({ last_success_at: late, last_failure_at: early }, true))).toBe('change_pending');
    expect(upstreamHealth(status({ last_success_at: late, last_failure_at: early }))).toBe('ok');
    expect(upstreamHealth(status({}))).toBe('unknown');
  });

  it('merges the upstream calls into the events by time, a call at an event’s instant after it', () => {
    const entries = [event('1', '2026-01-01T00:00:01.000Z'), event('2', '2026-01-01T00:00:03.000Z')];
    const calls = [call('SendMessage', '2026-01-01T00:00:01.000Z'), call('GetTask', '2026-01-01T00:00:02.000Z'), call('GetTask', '2026-01-01T00:00:04.000Z')];
    expect(mergeTimeline(entries, calls).map((item) => (item.kind === 'event' ? `event ${item.entry.position}` : item.call.method))).toEqual([
      'event 1',
      'SendMessage',
      'GetTask',
      'event 2',
      'GetTask',
    ]);
    expect(mergeTimeline(entries, []).map((item) => item.kind)).toEqual(['event', 'event']);
  });

  it('shows hosts and card values as short text', () => {
    expect(hostOf('http://127.0.0.1:4000/a2a')).toBe('127.0.0.1:4000');
    expect(hostOf('not a url')).toBe('not a url');
    expect([changeValueText('JSONRPC'), changeValueText(true), changeValueText(null), changeValueText({ a: 1 })]).toEqual([
      'JSONRPC',
      'yes',
      'none',
      '{"a":1}',
    ]);
  });
});
