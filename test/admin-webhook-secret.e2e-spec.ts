import request from 'supertest';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]{32,}$/;

describe('webhook signing secrets through the admin API (kept by the notifier)', () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start();
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('shows a secret once at registration, and a new one on each rotation', async () => {
    const registered = await registerAgent(relay, { handle: uniqueHandle('wes', 'acme'), name: 'Wes', notification_webhook_url: 'http://127.0.0.1:9/wes' });
    expect(registered.webhook_secret).toMatch(WEBHOOK_SECRET);
    const shown = await request(relay.url).get(`/admin/agents/${registered.agent.handle}`).set(admin).expect(200);
    expect(JSON.stringify(shown.body)).not.toContain(registered.webhook_secret as string);

    const rotated = await request(relay.url).post(`/admin/agents/${registered.agent.handle}/webhook-secret`).set(admin).expect(201);
    expect(rotated.body).toEqual({ handle: registered.agent.handle, webhook_secret: expect.stringMatching(WEBHOOK_SECRET) });
    expect(rotated.body.webhook_secret).not.toBe(registered.webhook_secret);

    let stdout = '';
    const code = await run(
      ['webhook-secret', 'rotate', registered.agent.handle, '--json'],
      { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      {
        stdout: (text) => (stdout += text),
        stderr: () => undefined,
      },
    );
    expect(code).toBe(EXIT.ok);
    expect(JSON.parse(stdout).webhook_secret).toMatch(WEBHOOK_SECRET);
    expect(JSON.parse(stdout).webhook_secret).not.toBe(rotated.body.webhook_secret);
  });

  it('refuses to rotate for an unknown (404) or disabled (409) agent, and without the admin token (401)', async () => {
    await request(relay.url).post(`/admin/agents/nobody-${Date.now()}@acme/webhook-secret`).set(admin).expect(404);
    const gone = await registerAgent(relay, { handle: uniqueHandle('gone', 'acme'), name: 'Gone' });
    await request(relay.url).delete(`/admin/agents/${gone.agent.handle}`).set(admin).expect(200);
    await request(relay.url).post(`/admin/agents/${gone.agent.handle}/webhook-secret`).set(admin).expect(409);
    await request(relay.url).post(`/admin/agents/${gone.agent.handle}/webhook-secret`).expect(401);
  });
});
