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
  /** A change as the browser makes it: the session's cookie and CSRF token. */
  function as(role: Role) {
    const { cookie, csrf } = sessions[role];
    return (test: request.Test): request.Test => test.set('cookie', cookie).set('x-csrf-token', csrf);
  }

  it('lets each role use the routes of its class and refuses the others with 403 role_forbidden, changing nothing', async () => {
    const targets = {} as Record<Role, RegisteredTestAgent>;
    for (const role of ROLES) targets[role] = await registerAgent(relay, { handle: uniqueHandle(`target-${role}`, 'acme'), name: role });
    const routes: Array<{ name: string; least: Role; call: (role: Role) => request.Test }> = [
      { name: 'read', least: 'auditor', call: (role) => request(relay.url).get(`/admin/agents/${targets[role].agent.handle}`) },
      { name: 'search', least: 'viewer', call: () => request(relay.url).get('/admin/search?q=anything') },
      { name: 'redeliver', least: 'operator', call: () => request(relay.url).post(`/admin/deliveries/${randomUUID()}/redeliver`) },
      {
        name: 'trust',
        least: 'operator',
        call: (role) =>
          request(relay.url)
            .put(`/admin/agents/${targets[role].agent.handle}/trust`)
            .send({ allow: ['*@acme'] }),
      },
      { name: 'key issuance', least: 'admin', call: (role) => request(relay.url).post(`/admin/agents/${targets[role].agent.handle}/keys`) },
      { name: 'disable', least: 'operator', call: (role) => request(relay.url).delete(`/admin/agents/${targets[role].agent.handle}`) },
    ];
    const answers: Record<string, Record<string, number>> = {};
    for (const route of routes) {
      answers[route.name] = {};
      for (const role of ROLES) {
        const response = await as(role)(route.call(role));
        answers[route.name][role] = response.status;
        if (response.status === 403) {
          expect(response.body.error).toMatchObject({ reason: 'role_forbidden', data: { role, least_role: route.least } });
        }
      }
    }
    expect(answers).toEqual({
      read: { auditor: 200, viewer: 200, operator: 200, admin: 200 },
      search: { auditor: 403, viewer: 200, operator: 200, admin: 200 },
      // An unknown delivery: the role was let through to the notifier, which has none.
      redeliver: { auditor: 403, viewer: 403, operator: 404, admin: 404 },
      trust: { auditor: 403, viewer: 403, operator: 200, admin: 200 },
      'key issuance': { auditor: 403, viewer: 403, operator: 403, admin: 201 },
      disable: { auditor: 403, viewer: 403, operator: 200, admin: 200 },
    });
    // What was refused did not happen.
    for (const role of ['auditor', 'viewer'] as const) {
      const agent = await request(relay.url).get(`/admin/agents/${targets[role].agent.handle}`).set(admin).expect(200);
      expect(agent.body.disabled).toBe(false);
      const trust = await request(relay.url).get(`/admin/agents/${targets[role].agent.handle}/trust`).set(admin).expect(200);
      expect(trust.body.allow).toEqual([]);
    }
    const keys = await request(relay.url).get(`/admin/agents/${targets.operator.agent.handle}/keys`).set(admin).expect(200);
    expect(keys.body.items).toHaveLength(1);
  });

  it('shows an auditor no message bodies: not in the task list, a task, the event stream; and search is refused', async () => {
    const word = `numbat${Math.random().toString(36).slice(2, 10).replace(/[0-9]/g, 'x')}`;
    const alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    const auditorHeaders = { cookie: sessions.auditor.cookie };
    const stream: SseStream = await openSse(`${relay.url}/admin/events`, auditorHeaders, undefined);
    const viewerStream: SseStream = await openSse(`${relay.url}/admin/events`, { cookie: sessions.viewer.cookie }, undefined);
    try {
      expect(stream.status).toBe(200);
      expect((await stream.next())?.event).toBe('ready');
      expect((await viewerStream.next())?.event).toBe('ready');
      const taskId = await createTask(relay.url, alice, bob, `The ${word} migration is ready`);
      await ok(relay.url, bob.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
      const nextOf = async (events: SseStream) => {
        for (;;) {
          const event = await events.next();
          if (event === undefined) throw new Error('the stream ended');
          if (event.event === 'task' && event.data.task_id === taskId) return event;
        }
      };
      const seenByAuditor = await nextOf(stream);
      const seenByViewer = await nextOf(viewerStream);
      expect(seenByViewer.data.summary).toContain(word);
      expect(seenByAuditor.data).toMatchObject({ task_id: taskId, event: 'created', state: 'pending', sender: alice.agent.handle, summary: '' });
      expect(seenByAuditor.raw).not.toContain(word);

      const viewerList = await request(relay.url).get(`/admin/tasks?agent=${alice.agent.handle}`).set('cookie', sessions.viewer.cookie).expect(200);
      expect(JSON.stringify(viewerList.body)).toContain(word);
      const list = await request(relay.url).get(`/admin/tasks?agent=${alice.agent.handle}`).set(auditorHeaders).expect(200);
      expect(list.body).toMatchObject({ bodies_hidden: true, items: [{ id: taskId, sender: { handle: alice.agent.handle }, message_count: 1 }] });
      expect(JSON.stringify(list.body)).not.toContain(word);
      const detail = await request(relay.url).get(`/admin/tasks/${taskId}`).set(auditorHeaders).expect(200);
      expect(detail.body).toMatchObject({ bodies_hidden: true, task: { id: taskId, state: 'accepted' } });
      expect(detail.body.timeline.length).toBeGreaterThan(0);
      expect(JSON.stringify(detail.body)).not.toContain(word);
      const viewerDetail = await request(relay.url).get(`/admin/tasks/${taskId}`).set('cookie', sessions.viewer.cookie).expect(200);
      expect(JSON.stringify(viewerDetail.body)).toContain(word);

      await eventually(async () => (await request(relay.url).get(`/admin/search?q=${word}`).set(admin)).body.items?.length === 1, 20000);
      const search = await request(relay.url).get(`/admin/search?q=${word}`).set(auditorHeaders).expect(403);
      expect(search.body.error.reason).toBe('role_forbidden');
      expect(JSON.stringify(search.body)).not.toContain(word.slice(6));
    } finally {
      stream.close();
      viewerStream.close();
    }
  });

  it('refuses a person the provider gives no role with a page that says so, and no session', async () => {
    const refused = await signInWithOidc(relay.url, people.nobody.sub);
    if (isSignedIn(refused)) throw new Error('a person without a role was signed in');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toMatch(/^text\/html/);
    expect(refused.body).toContain('No console role');
    expect(refused.body).toContain('nora@acme.test');
    expect(refused.headers.getSetCookie().some((cookie) => cookie.startsWith('relay_session='))).toBe(false);
  });

  it('refuses a callback without the flow cookie, or with another state, with a page, before asking the provider', async () => {
    const start = await fetch(`${relay.url}/admin/session/oidc/start`, { redirect: 'manual' });
    expect(start.status).toBe(303);
    const authorization = new URL(start.headers.get('location') as string);
    expect(authorization.origin).toBe(provider.issuer);
    expect(Object.fromEntries(authorization.searchParams)).toMatchObject({
      client_id: 'agentrelay-console',
      response_type: 'code',
      code_challenge_method: 'S256',
      redirect_uri: `${relay.url}/admin/session/oidc/callback`,
      scope: 'openid profile email groups agentrelay',
    });
    const flowCookie = start.headers.getSetCookie().find((cookie) => cookie.startsWith('relay_oidc_flow='));
    expect(flowCookie).toMatch(/^relay_oidc_flow=[^;]+; HttpOnly; SameSite=Lax; Path=\/admin\/session\/oidc; Max-Age=600$/);
    const state = authorization.searchParams.get('state') as string;
    const tokenRequests = provider.requestCount('/token');

    const withoutCookie = await fetch(`${relay.url}/admin/session/oidc/callback?code=abc&state=${state}`, { redirect: 'manual' });
    expect(withoutCookie.status).toBe(400);
    expect(await withoutCookie.text()).toContain('Sign-in expired');

    const flow = (flowCookie as string).split(';')[0];
    const otherState = await fetch(`${relay.url}/admin/session/oidc/callback?code=abc&state=forged&iss=${encodeURIComponent(provider.issuer)}`, {
      redirect: 'manual',
      headers: { cookie: flow },
    });
    expect(otherState.status).toBe(401);
    expect(await otherState.text()).toContain('Sign-in refused');

    const tampered = await fetch(`${relay.url}/admin/session/oidc/callback?code=abc&state=${state}`, { redirect: 'manual', headers: { cookie: `${flow}x` } });
    expect(tampered.status).toBe(400);

    const deniedAtProvider = await fetch(
      `${relay.url}/admin/session/oidc/callback?error=access_denied&error_description=%3Cb%3Eno%3C%2Fb%3E&state=${state}&iss=${encodeURIComponent(provider.issuer)}`,
      {
        redirect: 'manual',
        headers: { cookie: flow },
      },
    );
    expect(deniedAtProvider.status).toBe(401);
    const deniedPage = await deniedAtProvider.text();
    expect(deniedPage).toContain('access_denied');
    expect(deniedPage).not.toContain('<b>');
    expect(provider.requestCount('/token')).toBe(tokenRequests);
  });

  it('signs out server-side: the cookie is refused afterwards and the audit names the person', async () => {
    const vera = await signedIn(relay.url, people.viewer.sub);
    await request(relay.url).get('/admin/agents').set('cookie', vera.cookie).expect(200);
    await request(relay.url).delete('/admin/session').set('cookie', vera.cookie).set('x-csrf-token', vera.csrf).expect(204);
    await request(relay.url).get('/admin/agents').set('cookie', vera.cookie).expect(401);
    await request(relay.url).get('/admin/session').set('cookie', vera.cookie).expect(401);
    const audit = await request(relay.url).get('/admin/audit?limit=50').set(admin).expect(200);
    const out = audit.body.items.find((row: { action: string; target: string }) => row.action === 'session.sign_out' && row.target === vera.session.session);
    expect(out).toMatchObject({ actor_sub: 'vera', actor_email: 'vera@acme.test' });
  });

  it('tells the console which sign-ins this relay offers', async () => {
    const methods = await request(relay.url).get('/admin/session/methods').expect(200);
    expect(methods.body).toEqual({ admin_token: true, oidc: { start_url: '/admin/session/oidc/start' } });
  });
});

describe('console sign-in through OIDC while the provider is down', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;

  beforeAll(async () => {
    provider = await startConsoleProvider([people.viewer]);
    relay = await RelayHarness.start({ services: ['directory'], env: consoleOidcEnv(provider) });
    registerConsoleClient(provider, relay.url);
  });

  afterAll(async () => {
    await relay?.stop();
    await provider?.stop();
  });

  it('keeps signed-in people signed in, and answers a new sign-in 503 with Retry-After until the provider is back', async () => {
    const vera = await signedIn(relay.url, people.viewer.sub);
    await provider.stop();
    await request(relay.url).get('/admin/agents').set('cookie', vera.cookie).expect(200);
    // The provider's metadata is known: the browser is sent there, and the code cannot be exchanged.
    const start = await fetch(`${relay.url}/admin/session/oidc/start`, { redirect: 'manual' });
    const flow = (start.headers.getSetCookie().find((cookie) => cookie.startsWith('relay_oidc_flow=')) as string).split(';')[0];
    const state = new URL(start.headers.get('location') as string).searchParams.get('state') as string;
    const callback = await fetch(`${relay.url}/admin/session/oidc/callback?code=abc&state=${state}&iss=${encodeURIComponent(provider.issuer)}`, {
      redirect: 'manual',
      headers: { cookie: flow },
    });
    expect(callback.status).toBe(503);
    expect(Number(callback.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await callback.text()).toContain('Identity provider unavailable');
    await provider.start();
    const again = await signedIn(relay.url, people.viewer.sub);
    expect(again.session).toMatchObject({ role: 'viewer', person: { sub: 'vera' } });
  });

  it('answers 503 with Retry-After to a sign-in when the provider was never reached', async () => {
    const cold = await relay.startEdge();
    await provider.stop();
    try {
      const start = await fetch(`${relay.urlOf(cold)}/admin/session/oidc/start`, { redirect: 'manual' });
      expect(start.status).toBe(503);
      expect(Number(start.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(start.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await start.text()).toContain('Identity provider unavailable');
    } finally {
      await provider.start();
    }
  });
});

describe('console sign-in through OIDC on a relay without an admin token', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;

  beforeAll(async () => {
    provider = await startConsoleProvider([people.admin]);
    relay = await RelayHarness.start({ services: ['directory'], env: consoleOidcEnv(provider, { RELAY_ADMIN_TOKEN: '' }) });
    registerConsoleClient(provider, relay.url);
  });

  afterAll(async () => {
    await relay?.stop();
    await provider?.stop();
  });

  it('offers only the OIDC sign-in, lets people in with their role and refuses any bearer token', async () => {
    const methods = await request(relay.url).get('/admin/session/methods').expect(200);
    expect(methods.body).toEqual({ admin_token: false, oidc: { start_url: '/admin/session/oidc/start' } });
    const ada = await signedIn(relay.url, people.admin.sub);
    expect(ada.session).toMatchObject({ role: 'admin', person: { sub: 'ada' } });
    await request(relay.url).get('/admin/agents').set('cookie', ada.cookie).expect(200);
    const bearer = await request(relay.url).get('/admin/agents').set(admin).expect(401);
    expect(bearer.body.error.reason).toBe('unauthenticated');
    const tokenSignIn = await request(relay.url).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(401);
    expect(tokenSignIn.body.error.message).toContain('RELAY_ADMIN_TOKEN is not set');
  });
});
