import { AgentCardError, parseAgentCard, protocolVersionOf } from './agent-card';

describe('parseAgentCard', () => {
  it('v1.0: the first supported interface the relay speaks, in the card’s order', () => {
    const parsed = parseAgentCard({
      name: 'Planner',
      description: 'Plans',
      supportedInterfaces: [
        { url: 'https://planner.example.com/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' },
        { url: 'https://planner.example.com/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0.2' },
        { url: 'https://planner.example.com/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
      capabilities: { streaming: true, pushNotifications: false },
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: 'header', name: 'X-Planner-Key' } },
        machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://idp.example.com/token', scopes: {} } } } },
      },
      skills: [{ id: 'plan', name: 'plan' }, { id: 'review' }],
    });
    expect(parsed).toEqual({
      url: 'https://planner.example.com/rest',
      binding: 'HTTP+JSON',
      protocol_version: '1.0',
      streaming: true,
      push_notifications: false,
      name: 'Planner',
      description: 'Plans',
      skills: ['plan', 'review'],
      api_key_header: 'X-Planner-Key',
      oauth2_token_url: 'https://idp.example.com/token',
      security: {
        schemes: {
          key: { apiKeySecurityScheme: { location: 'header', name: 'X-Planner-Key' } },
          machines: { oauth2SecurityScheme: { flows: { clientCredentials: { scopes: {}, tokenUrl: 'https://idp.example.com/token' } } } },
        },
      },
    });
  });

  it('v0.3: url with preferredTransport, then additionalInterfaces, at the card’s protocolVersion', () => {
    const card = {
      name: 'Old',
      protocolVersion: '0.3.0',
      url: 'https://old.example.com/grpc',
      preferredTransport: 'GRPC',
      additionalInterfaces: [{ url: 'https://old.example.com/a2a', transport: 'JSONRPC' }],
      securitySchemes: {
        key: { type: 'apiKey', in: 'header', name: 'X-Old-Key' },
        code: { type: 'oauth2', flows: { authorizationCode: { authorizationUrl: 'https://idp.example.com/auth', tokenUrl: 'https://idp.example.com/code' } } },
        machines: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: 'https://idp.example.com/token', scopes: {} } } },
      },
    };
    expect(parseAgentCard(card)).toMatchObject({
      url: 'https://old.example.com/a2a',
      binding: 'JSONRPC',
      protocol_version: '0.3',
      api_key_header: 'X-Old-Key',
      oauth2_token_url: 'https://idp.example.com/token',
    });
    // No preferredTransport: JSON-RPC, as v0.3 says.
    expect(parseAgentCard({ name: 'Plain', protocolVersion: '0.3.0', url: 'http://plain.example.com/' })).toMatchObject({
      binding: 'JSONRPC',
      protocol_version: '0.3',
    });
  });

  it('refuses a card with nothing the relay can deliver to, naming what it offers', () => {
    expect(() => parseAgentCard('x')).toThrow(AgentCardError);
    expect(() => parseAgentCard({ name: 'none' })).toThrow('lists no interface');
    expect(() => parseAgentCard({ supportedInterfaces: [{ url: 'https://x.example.com', protocolBinding: 'GRPC', protocolVersion: '1.0' }] })).toThrow(
      'it offers: GRPC 1.0',
    );
    expect(() => parseAgentCard({ supportedInterfaces: [{ url: 'ftp://x.example.com', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] })).toThrow(
      AgentCardError,
    );
    expect(() => parseAgentCard({ url: 'https://x.example.com', protocolVersion: '2.0' })).toThrow(AgentCardError);
  });

  it('passes over an interface URL and an API key header name longer than the relay stores', () => {
    const long = `https://planner.example.com/${'a'.repeat(2100)}`;
    const parsed = parseAgentCard({
      supportedInterfaces: [
        { url: long, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'https://planner.example.com/rpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
      securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: `X-${'k'.repeat(200)}` } } },
    });
    expect(parsed).toMatchObject({ url: 'https://planner.example.com/rpc', api_key_header: null });
    expect(() => parseAgentCard({ supportedInterfaces: [{ url: long, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] })).toThrow(
      /with an http\(s\) URL of at most 2048 characters/,
    );
  });

  it('reads protocol versions with or without their patch part', () => {
    expect(['0.3', '0.3.0', '1', '1.0', '1.0.7', '0.2.5', '', undefined].map(protocolVersionOf)).toEqual(['0.3', '0.3', '1.0', '1.0', '1.0', null, null, null]);
  });
});
