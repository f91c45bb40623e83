import request from 'supertest';
import { ConsoleSessions } from '../apps/edge/src/operator/sign-in/console-sessions';
import { uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

interface SignedIn {
  cookie: string;
  csrf: string;
  session: string;
  setCookie: string;
}

async function signIn(url: string): Promise<SignedIn> {
  const response = await request(url).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201);
  const setCookie = String(response.headers['set-cookie']);
  const cookie = /relay_session=([^;]+)/.exec(setCookie)?.[1];
  if (!cookie) throw new Error(`no session cookie in ${setCookie}`);
  return { cookie: `relay_session=${cookie}`, csrf: response.body.csrf_token, session: response.body.session, setCookie };
}

describe('console API: sessions, CSRF and the admin audit', () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start({ services: ['directory', 'notifier'] });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('signs in with the admin token: an HttpOnly, SameSite=Strict cookie on /admin, and no Secure over plain http', async () => {
    const response = await request(relay.url).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201);
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body).toEqual({
      csrf_token: expect.any(String),
      expires_at: expect.any(String),
      session: expect.stringMatching(/^[0-9a-f]{12}$/),
      role: 'admin',
      grants: [{ org: null, role: 'admin' }],
      person: null,
    });
    expect(Date.parse(response.body.expires_at) - Date.now()).toBeGreaterThan(7 * 60 * 60 * 1000);
    const setCookie = String(response.headers['set-cookie']);
    expect(setCookie).toMatch(/^relay_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/admin; Max-Age=28800$/);
    expect(JSON.stringify(response.body)).not.toContain(TEST_ADMIN_TOKEN);
  });

  it('answers 401 to a wrong token, an empty body and a missing token, without a cookie', async () => {
    for (const body of [{ token: 'wrong-token-0123456789abcdef' }, { token: `${TEST_ADMIN_TOKEN}x` }]) {
      const response = await request(relay.url).post('/admin/session').send(body).expect(401);
      expect(response.body.error.reason).toBe('unauthenticated');
      expect(response.headers['set-cookie']).toBeUndefined();
    }
    const missing = await request(relay.url).post('/admin/session').send({}).expect(400);
    expect(missing.body.error.fields[0].field).toBe('token');
  });

  it('lets the cookie in on every admin read, and GET /admin/session answers the same session and CSRF token', async () => {
    const signedIn = await signIn(relay.url);
    const current = await request(relay.url).get('/admin/session').set('cookie', signedIn.cookie).expect(200);
    expect(current.body).toMatchObject({ session: signedIn.session, csrf_token: signedIn.csrf });
    const agents = await request(relay.url).get('/admin/agents').set('cookie', signedIn.cookie).expect(200);
    expect(agents.headers['cache-control']).toBe('no-store');
    await request(relay.url).get('/admin/session').expect(401);
    await request(relay.url).get('/admin/session').set('cookie', 'relay_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').expect(401);
    await request(relay.url).get('/admin/agents').set('cookie', 'relay_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA').expect(401);
  });

  it('refuses a change made with the cookie but without (or with a wrong) CSRF token with 403, and changes nothing', async () => {
    const signedIn = await signIn(relay.url);
    const handle = uniqueHandle('csrf', 'acme');
    for (const headers of [{}, { 'x-csrf-token': 'wrong' }, { 'x-csrf-token': `${signedIn.csrf}x` }]) {
      const response = await request(relay.url).post('/admin/agents').set('cookie', signedIn.cookie).set(headers).send({ handle, name: 'C' }).expect(403);
      expect(response.body.error.reason).toBe('csrf_failed');
    }
    await request(relay.url).get(`/admin/agents/${handle}`).set(admin).expect(404);
    const created = await request(relay.url)
      .post('/admin/agents')
      .set('cookie', signedIn.cookie)
      .set('x-csrf-token', signedIn.csrf)
      .send({ handle, name: 'C' })
      .expect(201);
    expect(created.body.agent.handle).toBe(handle);
  });

  it('writes an admin audit row naming the console session or the admin token for each change', async () => {
    const signedIn = await signIn(relay.url);
    const handle = uniqueHandle('audited', 'acme');
    await request(relay.url).post('/admin/agents').set('cookie', signedIn.cookie).set('x-csrf-token', signedIn.csrf).send({ handle, name: 'A' }).expect(201);
    await request(relay.url).patch(`/admin/agents/${handle}`).set(admin).send({ role: 'backend' }).expect(200);
    const key = await request(relay.url).post(`/admin/agents/${handle}/keys`).set('cookie', signedIn.cookie).set('x-csrf-token', signedIn.csrf).expect(201);
    const audit = await request(relay.url).get('/admin/audit?limit=200').set('cookie', signedIn.cookie).expect(200);
    const mine = audit.body.items.filter(
      (row: { target: string | null; detail: Record<string, unknown> }) => row.target === handle || row.detail.handle === handle,
    );
    expect(mine.map((row: { actor: string; action: string }) => [row.actor, row.action])).toEqual([
      [`console:${signedIn.session}`, 'key.create'],
      ['admin token', 'agent.update'],
      [`console:${signedIn.session}`, 'agent.create'],
    ]);
    expect(mine[0].detail).toEqual({ prefix: key.body.key.prefix });
    expect(JSON.stringify(audit.body)).not.toContain(key.body.api_key);
    const page = await request(relay.url).get('/admin/audit?limit=1').set(admin).expect(200);
    expect(page.body.items).toHaveLength(1);
    const next = await request(relay.url).get(`/admin/audit?limit=1&cursor=${page.body.next_cursor}`).set(admin).expect(200);
    expect(BigInt(next.body.items[0].id)).toBeLessThan(BigInt(page.body.items[0].id));
    await request(relay.url).get('/admin/audit?cursor=abc').set(admin).expect(400);
  });

  it('signs out with the CSRF token: the cookie is refused afterwards, on every edge', async () => {
    const signedIn = await signIn(relay.url);
    const second = await relay.startEdge();
    const secondUrl = relay.urlOf(second);
    await request(secondUrl).get('/admin/agents').set('cookie', signedIn.cookie).expect(200);
    await request(relay.url).delete('/admin/session').set('cookie', signedIn.cookie).expect(403);
    const signedOut = await request(relay.url).delete('/admin/session').set('cookie', signedIn.cookie).set('x-csrf-token', signedIn.csrf).expect(204);
    expect(String(signedOut.headers['set-cookie'])).toMatch(/^relay_session=; HttpOnly; SameSite=Strict; Path=\/admin; Max-Age=0/);
    for (const url of [relay.url, secondUrl]) {
      await request(url).get('/admin/agents').set('cookie', signedIn.cookie).expect(401);
      await request(url).get('/admin/session').set('cookie', signedIn.cookie).expect(401);
    }
    const audit = await request(relay.url).get('/admin/audit?limit=50').set(admin).expect(200);
    const actions = audit.body.items
      .filter((row: { actor: string }) => row.actor === `console:${signedIn.session}`)
      .map((row: { action: string }) => row.action);
    expect(actions).toEqual(['session.sign_out', 'session.sign_in']);
  });

  it('expires a session server-side at its expiry, whatever the browser keeps', async () => {
    const signedIn = await signIn(relay.url);
    const sessions = relay.edge.get(ConsoleSessions);
    const cookie = signedIn.cookie.slice('relay_session='.length);
    expect(await sessions.find(cookie)).toMatchObject({ session: signedIn.session });
    expect(await sessions.find(cookie, Date.now() + 8 * 60 * 60 * 1000 + 1000)).toBeUndefined();
  });

  it('sets Secure on the cookie when the relay is served over https', async () => {
    const httpsEdge = await relay.startEdge({ RELAY_PUBLIC_URL: 'https://relay.example.test' });
    const response = await request(relay.urlOf(httpsEdge)).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201);
    expect(String(response.headers['set-cookie'])).toMatch(/; Secure$/);
  });
});

describe('console API: failed sign-ins go through the failed-login throttle', () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start({ services: ['directory'], env: { RELAY_AUTH_FAILURES_PER_WINDOW: '3', RELAY_AUTH_FAILURE_WINDOW_MS: '60000' } });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('answers 429 with Retry-After past the limit of wrong tokens, before the token is checked', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      await request(relay.url)
        .post('/admin/session')
        .send({ token: `wrong-token-${attempt}-0123456789abcdef` })
        .expect(401);
    }
    const throttled = await request(relay.url).post('/admin/session').send({ token: 'wrong-token-9-0123456789abcdef' }).expect(429);
    expect(throttled.body.error.reason).toBe('rate_limited');
    expect(Number(throttled.headers['retry-after'])).toBeGreaterThan(0);
    // The bearer route shares the count: the address is blocked there too.
    await request(relay.url).get('/admin/agents').set('authorization', 'Bearer wrong-token-x-0123456789abcdef').expect(429);
  });
});
