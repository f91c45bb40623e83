import { permissionAnswerOf } from './tool-prompts';

describe('permission answers on a handoff', () => {
  const answer = { kind: 'permission_answer', request_id: 'r-1', decision: 'allow' };

  it('are read from a data part in either dialect, or from the payload or A2A metadata', () => {
    expect(
      permissionAnswerOf(
        {
          parts: [
            { kind: 'text', text: 'ok' },
            { kind: 'data', data: answer },
          ],
        },
        'r-1',
      ),
    ).toEqual({ request_id: 'r-1', decision: 'allow' });
    expect(permissionAnswerOf({ parts: [{ type: 'data', data: { ...answer, decision: 'deny', reason: 'No.' } }] }, 'r-1')).toEqual({
      request_id: 'r-1',
      decision: 'deny',
      reason: 'No.',
    });
    expect(permissionAnswerOf({ parts: [{ data: answer }] }, 'r-1')).toEqual({ request_id: 'r-1', decision: 'allow' });
    expect(permissionAnswerOf({ payload: { permission_answer: { request_id: 'r-1', decision: 'deny' } } }, 'r-1')).toEqual({
      request_id: 'r-1',
      decision: 'deny',
    });
    expect(permissionAnswerOf({ metadata: { permission_answer: { request_id: 'r-1', decision: 'allow' } } }, 'r-1')).toEqual({
      request_id: 'r-1',
      decision: 'allow',
    });
  });

  it('are read from a text reply "allow <id>" or "deny <id>: reason", which a CLI or MCP reply can send', () => {
    expect(permissionAnswerOf({ parts: [{ type: 'text', text: 'allow r-1' }] }, 'r-1')).toEqual({ request_id: 'r-1', decision: 'allow' });
    expect(permissionAnswerOf({ parts: [{ kind: 'text', text: ' Deny r-1: not on main\nuse a branch ' }] }, 'r-1')).toEqual({
      request_id: 'r-1',
      decision: 'deny',
      reason: 'not on main\nuse a branch',
    });
    expect(permissionAnswerOf({ parts: [{ kind: 'text', text: 'deny r-1 too risky' }] }, 'r-1')).toEqual({
      request_id: 'r-1',
      decision: 'deny',
      reason: 'too risky',
    });
    expect(permissionAnswerOf({ parts: [{ kind: 'text', text: 'allow r-12' }] }, 'r-1')).toBeNull();
    expect(permissionAnswerOf({ parts: [{ kind: 'text', text: 'I would allow r-1' }] }, 'r-1')).toBeNull();
    expect(permissionAnswerOf({ parts: [{ kind: 'text', text: 'allow r.1' }] }, 'r-1')).toBeNull();
  });

  it('count only for their own request and only with a decision of allow or deny', () => {
    expect(permissionAnswerOf({ parts: [{ kind: 'data', data: answer }] }, 'r-2')).toBeNull();
    expect(permissionAnswerOf({ parts: [{ kind: 'data', data: { ...answer, decision: 'maybe' } }] }, 'r-1')).toBeNull();
    expect(permissionAnswerOf({ parts: [{ kind: 'text', text: 'allow' }] }, 'r-1')).toBeNull();
    expect(permissionAnswerOf({ payload: { permission_answer: 'allow' } }, 'r-1')).toBeNull();
  });
});
