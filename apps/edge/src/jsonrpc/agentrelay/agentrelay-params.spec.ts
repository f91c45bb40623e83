import { RelayError } from '@app/contracts';
import { parseArtifacts, parseListParams, parseMessage, parseProposedAction } from './agentrelay-params';

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
    expect(parseMessage({ message: { role: 'user', message_id: 'm-1', parts: [{ type: 'text', text: 'hi' }], payload: { k: 1 } } })).toEqual({
      message_id: 'm-1',
      parts: [{ kind: 'text', text: 'hi' }],
      payload: { k: 1 },
    });
    expect(fieldOf(() => parseMessage({}))).toBe('message');
    expect(fieldOf(() => parseMessage({ message: { parts: [] } }))).toBe('message.parts');
    expect(fieldOf(() => parseMessage({ message: { parts: [{ type: 'text' }] } }))).toBe('message.parts[0].text');
    expect(fieldOf(() => parseMessage({ message: { parts: [{ type: 'video' }] } }))).toBe('message.parts[0].type');
  });

  it('reads typed artifacts as type + fields', () => {
    expect(parseArtifacts({ artifacts: [{ type: 'file_diff', path: 'a', diff: 'd' }] })).toEqual([{ type: 'file_diff', fields: { path: 'a', diff: 'd' } }]);
    expect(parseArtifacts({})).toBeUndefined();
    expect(fieldOf(() => parseArtifacts({ artifacts: [{ path: 'a' }] }))).toBe('artifacts.0.type');
    expect(fieldOf(() => parseArtifacts({ artifacts: {} }))).toBe('artifacts');
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
    expect(parseListParams({})).toEqual({ role: 'recipient', limit: 50 });
    expect(
      parseListParams({ filter: { role: 'sender', status: ['pending', 'accepted'], since: '2026-04-20T00:00:00Z' }, page: { limit: 200, cursor: 'abc' } }),
    ).toEqual({
      role: 'sender',
      states: ['pending', 'accepted'],
      since: '2026-04-20T00:00:00.000Z',
      limit: 200,
      cursor: 'abc',
    });
    expect(fieldOf(() => parseListParams({ filter: { role: 'boss' } }))).toBe('filter.role');
    expect(fieldOf(() => parseListParams({ filter: { status: ['done'] } }))).toBe('filter.status');
    expect(fieldOf(() => parseListParams({ filter: { since: 'yesterday' } }))).toBe('filter.since');
    expect(fieldOf(() => parseListParams({ page: { limit: 0 } }))).toBe('page.limit');
    expect(fieldOf(() => parseListParams({ page: { limit: 201 } }))).toBe('page.limit');
  });
});
