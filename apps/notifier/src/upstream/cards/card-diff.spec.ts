import type { UpstreamCardSnapshot, UpstreamInterface } from '@app/contracts';
import { parseAgentCard } from './agent-card';
import { diffCards, interfaceOf, snapshotOf, withChanges } from './card-diff';

const CARD = {
  name: 'Planner',
  description: 'Plans',
  supportedInterfaces: [{ url: 'https://planner.example.com/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
  capabilities: { streaming: false, pushNotifications: false },
  securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'X-Planner-Key', description: '' } } },
  securityRequirements: [],
  skills: [{ id: 'plan', name: 'plan' }],
};

const accepted: UpstreamCardSnapshot = snapshotOf(parseAgentCard(CARD));

function read(changes: Record<string, unknown>): UpstreamCardSnapshot {
  return snapshotOf(parseAgentCard({ ...CARD, ...changes }));
}

describe('diffCards', () => {
  it('the same card, with keys in another order and empty fields spelled differently, is no change', () => {
    const respelled = {
      skills: [{ name: 'plan', id: 'plan' }],
      securitySchemes: { key: { apiKeySecurityScheme: { name: 'X-Planner-Key', location: 'header' } } },
      capabilities: { pushNotifications: false, streaming: false },
      supportedInterfaces: CARD.supportedInterfaces,
      description: 'Plans',
      name: 'Planner',
    };
    expect(diffCards(accepted, snapshotOf(parseAgentCard(respelled)))).toEqual({ changes: [], review: [], harmless: [] });
  });

  it('name, description and skills are harmless: they take effect without review', () => {
    const diff = diffCards(accepted, read({ name: 'Planner 2', description: 'Plans better', skills: [{ id: 'plan' }, { id: 'review' }] }));
    expect(diff.review).toEqual([]);
    expect(diff.harmless).toEqual([
      { field: 'name', old: 'Planner', new: 'Planner 2', review: false },
      { field: 'description', old: 'Plans', new: 'Plans better', review: false },
      { field: 'skills', old: ['plan'], new: ['plan', 'review'], review: false },
    ]);
  });

  it('a new URL, binding or protocol version needs review, with the old and new value', () => {
    const diff = diffCards(
      accepted,
      read({ supportedInterfaces: [{ url: 'https://planner.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' }], description: 'Moved' }),
    );
    expect(diff.review).toEqual([
      { field: 'url', old: 'https://planner.example.com/rpc', new: 'https://planner.example.com/rest', review: true },
      { field: 'binding', old: 'JSONRPC', new: 'HTTP+JSON', review: true },
      { field: 'protocol_version', old: '1.0', new: '0.3', review: true },
    ]);
    expect(diff.harmless.map((change) => change.field)).toEqual(['description']);
  });

  it('a changed, added or removed security scheme or requirement needs review; so do the capabilities', () => {
    const renamedHeader = diffCards(accepted, read({ securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'X-Other' } } } }));
    expect(renamedHeader.review.map((change) => change.field)).toEqual(['security']);
    expect(renamedHeader.review[0].old).toEqual({ schemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'X-Planner-Key' } } } });
    expect(diffCards(accepted, read({ securitySchemes: {} })).review[0]).toMatchObject({ field: 'security', new: null });
    expect(diffCards(accepted, read({ securityRequirements: [{ schemes: { key: { list: [] } } }] })).review.map((change) => change.field)).toEqual([
      'security',
    ]);
    expect(diffCards(accepted, read({ capabilities: { streaming: true } })).review).toEqual([{ field: 'streaming', old: false, new: true, review: true }]);
  });

  it('withChanges and interfaceOf make the accepted card and the interface deliveries use', () => {
    const diff = diffCards(
      accepted,
      read({ supportedInterfaces: [{ url: 'https://new.example.com/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] }),
    );
    const next = withChanges(accepted, diff.review);
    expect(next).toEqual({ ...accepted, url: 'https://new.example.com/rpc' });
    const current: UpstreamInterface = {
      card_url: 'https://planner.example.com/.well-known/agent-card.json',
      url: accepted.url,
      binding: 'JSONRPC',
      protocol_version: '1.0',
      streaming: false,
      push_notifications: false,
      auth_scheme: 'api_key',
      auth_header: 'X-Planner-Key',
      card_fetched_at: '2026-01-01T00:00:00.000Z',
    };
    expect(interfaceOf(current, next, '2026-02-01T00:00:00.000Z')).toEqual({
      ...current,
      url: 'https://new.example.com/rpc',
      card_fetched_at: '2026-02-01T00:00:00.000Z',
    });
  });
});
