import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { consoleOidcEnv, isSignedIn, registerConsoleClient, signInWithOidc, startConsoleProvider, type OidcSignIn } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { openSse, type SseStream } from './support/sse';
import { createTask } from './support/tasks';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const ROLES = ['auditor', 'viewer', 'operator', 'admin'] as const;
type Role = (typeof ROLES)[number];

const people = {
  admin: { sub: 'ada', claims: { email: 'ada@acme.test', name: 'Ada Admin', agentrelay_role: 'admin' } },
  operator: { sub: 'otto', claims: { email: 'otto@acme.test', name: 'Otto Operator', groups: ['relay-ops', 'everyone'] } },
  viewer: { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
  auditor: { sub: 'aud', claims: { email: 'aud@acme.test', name: 'Aud Auditor', groups: ['auditors'] } },
  nobody: { sub: 'nora', claims: { email: 'nora@acme.test', name: 'Nora Nobody', groups: ['everyone'] } },
};

async function signedIn(relayUrl: string, login: string): Promise<OidcSignIn> {
  const result = await signInWithOidc(relayUrl, login);
  if (!isSignedIn(result)) throw new Error(`signing in as ${login} answered ${result.status}: ${result.body}`);
  return result;
}

describe('console sign-in through OIDC, and roles on the admin API', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  const sessions = {} as Record<Role, OidcSignIn>;

  beforeAll(async () => {
    provider = await startConsoleProvider(Object.values(people));
    relay = await RelayHarness.start({
      env: consoleOidcEnv(provider, { RELAY_CONSOLE_OIDC_GROUP_ROLES: JSON.stringify({ 'relay-ops': 'operator', auditors: 'auditor' }) }),
    });
    registerConsoleClient(provider, relay.url);
    for (const role of ROLES) sessions[role] = await signedIn(relay.url, people[role].sub);
  });

  afterAll(async () => {
    await relay?.stop();
    await provider?.stop();
  });

  it('signs a person in through the provider: a session with their role, GET /admin/session names them, the audit names sub and email', async () => {
    const ada = sessions.admin;
    expect(ada.session).toMatchObject({
      role: 'admin',
      person: { issuer: provider.issuer, sub: 'ada', email: 'ada@acme.test', name: 'Ada Admin' },
      csrf_token: expect.any(String),
    });
    expect(sessions.operator.session).toMatchObject({ role: 'operator', person: { sub: 'otto' } });
    expect(sessions.auditor.session).toMatchObject({ role: 'auditor', person: { sub: 'aud' } });
    const handle = uniqueHandle('by-ada', 'acme');
    await request(relay.url).post('/admin/agents').set('cookie', ada.cookie).set('x-csrf-token', ada.csrf).send({ handle, name: 'By Ada' }).expect(201);
    const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    const created = audit.body.items.find(
      (row: { action: string; detail: { handle?: string } }) => row.action === 'agent.create' && row.detail.handle === handle,
    );
    expect(created).toMatchObject({ actor: `console:${ada.session.session}`, actor_sub: 'ada', actor_email: 'ada@acme.test' });
    const signIn = audit.body.items.find((row: { action: string; target: string }) => row.action === 'session.sign_in' && row.target === ada.session.session);
    expect(signIn).toMatchObject({ actor_sub: 'ada', actor_email: 'ada@acme.test', detail: { role: 'admin' } });
    const byToken = await request(relay.url).patch(`/admin/agents/${handle}`).set(admin).send({ role: 'backend' }).expect(200);
    expect(byToken.body.handle).toBe(handle);
    const after = await request(relay.url).get('/admin/audit?limit=5').set(admin).expect(200);
    expect(after.body.items.find((row: { action: string; target: string }) => row.action === 'agent.update' && row.target === handle)).toMatchObject({
      actor: 'admin token',
      actor_sub: null,
      actor_email: null,
    });
  });
});
