import request from 'supertest';
import { AgentCardResolver, ClientFactory } from '@a2a-js/sdk/client';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const PRIVATE = {
  email: 'frank.private@example.com',
  notification_webhook_url: 'http://127.0.0.1:9/private-hook-frank',
  slack_webhook_url: 'https://hooks.slack.example/services/PRIVATE/FRANK',
};

function expectNoPrivateField(body: string): void {
  expect(body).not.toContain(PRIVATE.email);
  expect(body).not.toContain('private-hook-frank');
  expect(body).not.toContain('PRIVATE/FRANK');
  expect(body).not.toMatch(/"email"|webhook_url/);
}

describe('agent cards (public, no auth)', () => {
  let relay: RelayHarness;
  let frank: RegisteredTestAgent;
  let handle: string;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    handle = uniqueHandle('frank', 'acme');
    frank = await registerAgent(relay, {
      handle,
      name: 'Frank — Frontend',
      role: 'frontend',
      description: 'Frontend agent for Acme apps',
      skills: ['react', 'tailwind', 'next.js'],
      metadata: { repos_owned: ['apps/web/', 'packages/ui/'] },
      ...PRIVATE,
    });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('serves the compact relay card for ?id=<handle> without an A2A-Version header', async () => {
    const response = await request(relay.url).get('/.well-known/agent-card.json').query({ id: handle }).expect(200);
    expect(response.body).toEqual({
      id: handle,
      name: 'Frank — Frontend',
      description: 'Frontend agent for Acme apps',
      endpoint: `${relay.url}/a2a`,
      auth: { type: 'api_key', in: 'header', name: 'Authorization' },
      skills: ['react', 'tailwind', 'next.js'],
      metadata: { role: 'frontend', repos_owned: ['apps/web/', 'packages/ui/'] },
    });
    expectNoPrivateField(response.text);
    expect(response.headers['etag']).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(response.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['vary']).toMatch(/A2A-Version/i);
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('answers 304 to a matching If-None-Match and a new ETag after a change', async () => {
    const first = await request(relay.url).get('/.well-known/agent-card.json').query({ id: handle }).expect(200);
    const etag = first.headers['etag'];
    await request(relay.url).get('/.well-known/agent-card.json').query({ id: handle }).set('if-none-match', etag).expect(304);
    await request(relay.url)
      .patch(`/admin/agents/${handle}`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ description: 'Frontend agent for Acme apps and the design system' })
      .expect(200);
    const changed = await request(relay.url).get('/.well-known/agent-card.json').query({ id: handle }).set('if-none-match', etag).expect(200);
    expect(changed.headers['etag']).not.toBe(etag);
    expect(changed.body.description).toBe('Frontend agent for Acme apps and the design system');
  });

  it('carries Last-Modified from the agent update time and answers 304 to If-Modified-Since until the agent changes', async () => {
    const first = await request(relay.url).get(`/a2a/${handle}/.well-known/agent-card.json`).expect(200);
    const lastModified = first.headers['last-modified'];
    expect(new Date(lastModified).toUTCString()).toBe(lastModified);
    await request(relay.url).get(`/a2a/${handle}/.well-known/agent-card.json`).set('if-modified-since', lastModified).expect(304);
    await request(relay.url).get('/.well-known/agent-card.json').query({ id: handle }).set('if-modified-since', lastModified).expect(304);
    const earlier = new Date(Date.parse(lastModified) - 1000).toUTCString();
    await request(relay.url).get(`/a2a/${handle}/.well-known/agent-card.json`).set('if-modified-since', earlier).expect(200);
    // If-None-Match decides alone when both are sent.
    await request(relay.url)
      .get(`/a2a/${handle}/.well-known/agent-card.json`)
      .set('if-modified-since', lastModified)
      .set('if-none-match', '"other"')
      .expect(200);
    await eventually(async () => {
      await request(relay.url)
        .patch(`/admin/agents/${handle}`)
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ description: `Frontend agent, edited ${Date.now()}` })
        .expect(200);
      const changed = await request(relay.url).get(`/a2a/${handle}/.well-known/agent-card.json`).set('if-modified-since', lastModified).expect(200);
      expect(Date.parse(changed.headers['last-modified'])).toBeGreaterThan(Date.parse(lastModified));
    });
  });

  it('serves a v1.0 AgentCard for ?id=<handle> with A2A-Version: 1.0 and under /a2a/<handle>/', async () => {
    const viaQuery = await request(relay.url).get('/.well-known/agent-card.json').query({ id: handle }).set('a2a-version', '1.0').expect(200);
    const viaPath = await request(relay.url).get(`/a2a/${handle}/.well-known/agent-card.json`).expect(200);
    expect(viaPath.body).toEqual(viaQuery.body);
    const card = viaPath.body;
    const endpoint = `${relay.url}/a2a/${handle}`;
    expect(card).toMatchObject({
      name: 'Frank — Frontend',
      version: expect.any(String),
      supportedInterfaces: [
        { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: endpoint, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
        { url: endpoint, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
        { url: endpoint, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
      ],
      capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: true },
      defaultInputModes: expect.arrayContaining(['text/plain']),
      defaultOutputModes: expect.arrayContaining(['text/plain']),
      securitySchemes: {
        bearer: { httpAuthSecurityScheme: expect.objectContaining({ scheme: 'Bearer' }) },
        apiKey: { apiKeySecurityScheme: expect.objectContaining({ location: 'header', name: 'X-API-Key' }) },
      },
    });
    for (const skill of card.skills) {
      expect(skill).toEqual({ id: expect.any(String), name: expect.any(String), description: expect.any(String), tags: expect.any(Array) });
    }
    expect(card.skills.map((skill: { id: string }) => skill.id)).toEqual(expect.arrayContaining(['react', 'tailwind', 'next.js']));
    expect(card).not.toHaveProperty('url');
    expectNoPrivateField(viaPath.text);
    expectNoPrivateField(viaQuery.text);
    expect(viaPath.headers['etag']).toBeDefined();
    expect(viaPath.headers['cache-control']).toMatch(/max-age/);
  });

  it('is accepted by the @a2a-js/sdk ClientFactory, which picks the 1.0 JSON-RPC interface of the agent', async () => {
    const client = await new ClientFactory().createFromUrl(`${relay.url}/a2a/${handle}/`);
    expect(client.protocolVersion).toBe('1.0');
    const card = await AgentCardResolver.default.resolve(`${relay.url}/a2a/${handle}/`);
    expect(card.name).toBe('Frank — Frontend');
    expect(card.supportedInterfaces[0]).toMatchObject({ url: `${relay.url}/a2a/${handle}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(Object.keys(card.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
    expect(card.capabilities?.pushNotifications).toBe(true);
  });

  it("serves the relay's own card without id, pointing at the relay endpoint", async () => {
    const response = await request(relay.url).get('/.well-known/agent-card.json').expect(200);
    expect(response.body.name).toBe('AgentRelay');
    expect(response.body.supportedInterfaces[0]).toEqual({ url: `${relay.url}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    expect(response.headers['etag']).toBeDefined();
    const client = await new ClientFactory().createFromUrl(relay.url);
    expect(client.protocolVersion).toBe('1.0');
  });

  it('answers 404 with a JSON body for an unknown, malformed or disabled handle', async () => {
    for (const path of [
      `/.well-known/agent-card.json?id=nobody@acme`,
      `/.well-known/agent-card.json?id=not-a-handle`,
      `/a2a/nobody@acme/.well-known/agent-card.json`,
    ]) {
      const response = await request(relay.url).get(path).expect(404);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body.error.reason).toBe('agent_not_found');
    }
    const gone = await registerAgent(relay, { handle: uniqueHandle('gone', 'acme'), name: 'Gone' });
    await request(relay.url).get(`/a2a/${gone.agent.handle}/.well-known/agent-card.json`).expect(200);
    await request(relay.url).delete(`/admin/agents/${gone.agent.handle}`).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    await request(relay.url).get(`/a2a/${gone.agent.handle}/.well-known/agent-card.json`).expect(404);
    await request(relay.url).get('/.well-known/agent-card.json').query({ id: gone.agent.handle }).set('a2a-version', '1.0').expect(404);
  });

  it('points at the public URL of the edge that serves it', async () => {
    const second = await relay.startEdge({ RELAY_PUBLIC_URL: 'https://relay.example.test' });
    const response = await request(relay.urlOf(second)).get(`/a2a/${handle}/.well-known/agent-card.json`).expect(200);
    expect(response.body.supportedInterfaces[0].url).toBe(`https://relay.example.test/a2a/${handle}`);
    expect(frank.agent.handle).toBe(handle);
  });
});
