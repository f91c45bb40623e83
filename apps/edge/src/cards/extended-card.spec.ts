import { agentCardV1 } from './agent-card';
import { agentCardV03 } from './extended-card';

describe('agentCardV03', () => {
  const card = agentCardV1(
    {
      id: 'id-1',
      handle: 'frank@acme',
      name: 'Frank',
      role: 'frontend',
      org: 'acme',
      description: 'Frontend agent',
      skills: ['react'],
      metadata: {},
      input_modes: null,
    },
    'http://127.0.0.1:8080',
  );

  it('renders the v1.0 card in the v0.3 shape, pointing at the v0.3 interface', () => {
    const v03 = agentCardV03(card);
    expect(v03).toMatchObject({
      protocolVersion: '0.3.0',
      name: 'Frank',
      description: 'Frontend agent',
      url: 'http://127.0.0.1:8080/a2a/frank@acme',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [
        { url: 'http://127.0.0.1:8080/a2a/frank@acme', transport: 'JSONRPC' },
        { url: 'http://127.0.0.1:8080/a2a/frank@acme', transport: 'HTTP+JSON' },
      ],
      capabilities: { streaming: true, pushNotifications: card.capabilities.pushNotifications },
      supportsAuthenticatedExtendedCard: true,
    });
    expect(v03).not.toHaveProperty('supportedInterfaces');
  });

  it('turns ProtoJSON security schemes into v0.3 schemes with a type', () => {
    const v03 = agentCardV03(card);
    expect(v03.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      apiKey: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
    });
    expect(v03.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
  });
});
