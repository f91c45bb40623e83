import type { AdminAuditEntry } from '@app/contracts';
import { chainRefusalOf } from './chain-refusal';

const entry = (detail: Record<string, unknown>): AdminAuditEntry => ({
  id: '42',
  at: '2026-01-01T00:00:00.000Z',
  actor: 'agent:carol@acme',
  actor_sub: null,
  actor_email: null,
  action: 'handoff.refuse',
  target: 'alice@acme',
  org: 'acme',
  detail,
});

describe('chainRefusalOf', () => {
  it('reads a refusal from its audit row', () => {
    const refusal = chainRefusalOf(
      entry({
        reason: 'chain_cycle',
        sender: 'carol@acme',
        limit: 1,
        limit_name: 'cycles',
        path: ['alice@acme', 'bob@acme', 'carol@acme', 'alice@acme'],
        parent_task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF',
        root_task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTA',
      }),
    );
    expect(refusal).toEqual({
      id: '42',
      at: '2026-01-01T00:00:00.000Z',
      reason: 'chain_cycle',
      sender: 'carol@acme',
      recipient: 'alice@acme',
      limit: 1,
      limit_name: 'cycles',
      path: ['alice@acme', 'bob@acme', 'carol@acme', 'alice@acme'],
      parent_task_id: '01HXYZ4K2VNJQP7R8MWDB3CSTF',
    });
  });

  it('takes nothing of the wrong type from a detail, and names the sender from the actor when the detail does not', () => {
    expect(chainRefusalOf(entry({ reason: 7, limit: '8', path: ['a@acme', 3, null], parent_task_id: {} }))).toEqual({
      id: '42',
      at: '2026-01-01T00:00:00.000Z',
      reason: 'unknown',
      sender: 'carol@acme',
      recipient: 'alice@acme',
      limit: null,
      limit_name: null,
      path: ['a@acme'],
      parent_task_id: null,
    });
  });
});
