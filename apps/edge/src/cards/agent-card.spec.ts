import type { AgentPublicProfile } from '@app/contracts';
import { agentCardV1, relayAgentCard, relayCardV1 } from './agent-card';
import { cardEtag, wantsV1Card } from './cards.controller';

const PROFILE: AgentPublicProfile = {
  id: '00000000-0000-4000-8000-000000000001',
  handle: 'frank@acme',
  name: 'Frank',
  role: 'frontend',
  org: 'acme',
  description: null,
  skills: ['react'],
  metadata: { repos_owned: ['apps/web/'] },
  input_modes: null,
};

describe('agent cards', () => {
  it('builds the v1.0 card with the JSON-RPC and HTTP+JSON interfaces of both versions at the public URL (trailing slash ignored)', () => {
    const card = agentCardV1(PROFILE, 'https://relay.example/');
    expect(card.supportedInterfaces).toEqual([
      { url: 'https://relay.example/a2a/frank@acme', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url: 'https://relay.example/a2a/frank@acme', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url: 'https://relay.example/a2a/frank@acme', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url: 'https://relay.example/a2a/frank@acme', protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ]);
    expect(card.description).toContain('Frank');
    expect(card.skills.map((skill) => skill.id)).toEqual(['handoff', 'react']);
    expect(card.securityRequirements).toHaveLength(2);
  });

  it("adds JSON-RPC and HTTP+JSON 1.0 interfaces naming the org's tenant after the others, which stay as they were", () => {
    const plain = agentCardV1(PROFILE, 'https://relay.example').supportedInterfaces;
    const card = agentCardV1(PROFILE, 'https://relay.example', [], 'acme-co');
    expect(card.supportedInterfaces.slice(0, plain.length)).toEqual(plain);
    expect(card.supportedInterfaces.slice(plain.length)).toEqual([
      { url: 'https://relay.example/a2a/frank@acme', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'acme-co' },
      { url: 'https://relay.example/a2a/frank@acme', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: 'acme-co' },
    ]);
    expect(plain.some((entry) => 'tenant' in entry)).toBe(false);
  });

  it("declares the agent's input modes, or the relay's default when it has none", () => {
    expect(agentCardV1(PROFILE, 'http://relay.test').defaultInputModes).toEqual(['text/plain', 'application/json']);
    expect(agentCardV1({ ...PROFILE, input_modes: ['text/*', 'application/pdf'] }, 'http://relay.test').defaultInputModes).toEqual([
      'text/*',
      'application/pdf',
    ]);
  });

  it("builds the relay's compact card with the role in metadata", () => {
    expect(relayAgentCard(PROFILE, 'https://relay.example')).toEqual({
      id: 'frank@acme',
      name: 'Frank',
      description: null,
      endpoint: 'https://relay.example/a2a',
      auth: { type: 'api_key', in: 'header', name: 'Authorization' },
      skills: ['react'],
      metadata: { repos_owned: ['apps/web/'], role: 'frontend' },
    });
  });

  it("points the relay's card at /a2a", () => {
    expect(relayCardV1('http://127.0.0.1:8080').supportedInterfaces[0].url).toBe('http://127.0.0.1:8080/a2a');
  });

  it('picks the v1.0 card for A2A-Version 1.0 (patch ignored) only', () => {
    expect(wantsV1Card('1.0')).toBe(true);
    expect(wantsV1Card(' 1.0.2 ')).toBe(true);
    expect(wantsV1Card('0.3')).toBe(false);
    expect(wantsV1Card('')).toBe(false);
    expect(wantsV1Card(undefined)).toBe(false);
    expect(wantsV1Card('1.01')).toBe(false);
  });

  it('derives the ETag from the body', () => {
    expect(cardEtag('{"a":1}')).toBe(cardEtag('{"a":1}'));
    expect(cardEtag('{"a":1}')).not.toBe(cardEtag('{"a":2}'));
  });
});
