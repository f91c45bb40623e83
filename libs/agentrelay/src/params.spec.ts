import { RelayError } from '@app/contracts';
import { parseRelayArtifacts, parseRelayListParams, parseRelayMessage, parseProposedAction } from './params';

function fieldOf(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    expect((error as RelayError).reason).toBe('invalid_params');
    return (error as RelayError).data?.field as string;
  }
}

describe('AgentRelay params', () => {
  it('reads a message with text parts, a client message id and a payload', () => {
    expect(parseRelayMessage({ message: { role: 'user', message_id: 'm-1', parts: [{ type: 'text', text: 'hi' }], payload: { k: 1 } } })).toEqual({
      message_id: 'm-1',
      parts: [{ kind: 'text', text: 'hi' }],
      payload: { k: 1 },
    });
    expect(fieldOf(() => parseRelayMessage({}))).toBe('message');
    expect(fieldOf(() => parseRelayMessage({ message: { parts: [] } }))).toBe('message.parts');
    expect(fieldOf(() => parseRelayMessage({ message: { parts: [{ type: 'text' }] } }))).toBe('message.parts[0].text');
    expect(fieldOf(() => parseRelayMessage({ message: { parts: [{ type: 'video' }] } }))).toBe('message.parts[0].type');
  });

  it('reads typed artifacts as type + fields', () => {
    expect(parseRelayArtifacts({ artifacts: [{ type: 'file_diff', path: 'a', diff: 'd' }] })).toEqual([
      { type: 'file_diff', fields: { path: 'a', diff: 'd' } },
    ]);
    expect(parseRelayArtifacts({})).toBeUndefined();
    expect(fieldOf(() => parseRelayArtifacts({ artifacts: [{ path: 'a' }] }))).toBe('artifacts.0.type');
    expect(fieldOf(() => parseRelayArtifacts({ artifacts: {} }))).toBe('artifacts');
  });

  it('reads proposed_action, null when absent', () => {
    expect(parseProposedAction({ proposed_action: null })).toBeNull();
    expect(parseProposedAction({ proposed_action: { description: 'd', target_files: ['a'], rationale: 'r' } })).toEqual({
      description: 'd',
      target_files: ['a'],
      rationale: 'r',
    });
    expect(fieldOf(() => parseProposedAction({ proposed_action: { description: 'd', rationale: 'r' } }))).toBe('proposed_action.target_files');
  });

  it('reads list filters and pages with their defaults and bounds', () => {
    expect(parseRelayListParams({})).toEqual({ role: 'recipient', limit: 50 });
    expect(
      parseRelayListParams({ filter: { role: 'sender', status: ['pending', 'accepted'], since: '2026-04-20T00:00:00Z' }, page: { limit: 200, cursor: 'abc' } }),
    ).toEqual({
      role: 'sender',
      states: ['pending', 'accepted'],
      since: '2026-04-20T00:00:00.000Z',
      limit: 200,
      cursor: 'abc',
    });
    expect(fieldOf(() => parseRelayListParams({ filter: { role: 'boss' } }))).toBe('filter.role');
    expect(fieldOf(() => parseRelayListParams({ filter: { status: ['done'] } }))).toBe('filter.status');
    expect(fieldOf(() => parseRelayListParams({ filter: { since: 'yesterday' } }))).toBe('filter.since');
    expect(fieldOf(() => parseRelayListParams({ page: { limit: 0 } }))).toBe('page.limit');
    expect(fieldOf(() => parseRelayListParams({ page: { limit: 201 } }))).toBe('page.limit');
  });
});
