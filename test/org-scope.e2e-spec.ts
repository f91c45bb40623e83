import { randomBytes, randomUUID } from 'node:crypto';
import { RequestMethod } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import request from 'supertest';
import { ADMIN_ROLES, roleAllows, type AdminRole } from '@app/contracts';
import { LEAST_ROLE } from '../apps/edge/src/operator/admin-roles';
import { routeScopeOf } from '../apps/edge/src/operator/org-scope/admin-route-scopes';
import { AdminTokenGuard } from '../apps/edge/src/operator/sign-in/admin-token.guard';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { consoleOidcEnv, isSignedIn, registerConsoleClient, signInWithOidc, startConsoleProvider, type OidcSignIn } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { openSse } from './support/sse';
import { createTask } from './support/tasks';
import { WebhookSink } from './support/webhook-sink';

/**
 * Scoped roles (docs/orgs.md#scoped-roles) on the real relay, people signed in through a real
 * OpenID Provider on loopback: two orgs, a person of each role in each; every guarded admin route
 * the running edge registered is tried by every role of the other org, and none reads or changes
 * anything of it.
 */
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const suffix = randomBytes(3).toString('hex');
const PAY = `pay-${suffix}`;
const WEB = `web-${suffix}`;
type Org = typeof PAY | typeof WEB;

interface AdminRoute {
  method: string;
  path: string;
  least: AdminRole;
}

/** Every guarded admin route of the running edge, read from the controllers its Nest container holds and checked against Fastify's router. */
function registeredAdminRoutes(relay: RelayHarness): AdminRoute[] {
  const fastify = relay.edge.getHttpAdapter().getInstance() as FastifyInstance;
  const routes: AdminRoute[] = [];
  for (const module of relay.edge.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '').replace(/^\/|\/$/g, '');
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
        const path = `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler)).replace(/^\/|\/$/g, '')].filter(Boolean).join('/')}`;
        if (!path.startsWith('/admin/')) continue;
        const guards = [
          ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[]) ?? []),
          ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[]) ?? []),
        ];
        if (!guards.includes(AdminTokenGuard)) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
        if (!fastify.hasRoute({ method: method as 'GET', url: path })) throw new Error(`${method} ${path} is declared but not registered`);
        const least = (Reflect.getMetadata(LEAST_ROLE, handler) ?? (method === 'GET' ? Reflect.getMetadata(LEAST_ROLE, controller) : undefined)) as AdminRole;
        routes.push({ method, path, least });
      }
    }
  }
  return routes;
}

function personOf(org: Org, role: AdminRole): { sub: string; claims: Record<string, unknown> } {
  const name = `${role}-of-${org}`;
  return { sub: name, claims: { email: `${name}@people.test`, email_verified: true, name, agentrelay_role: `${org}:${role}` } };
}

describe('scoped roles: each org administers only its own', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let sink: WebhookSink;
  const sessions = new Map<string, OidcSignIn>();
  const agents = {} as Record<'alpha' | 'beta' | 'gamma' | 'delta', RegisteredTestAgent>;
  /** Objects of PAY that WEB's people must not reach. */
  const pay = {} as { heldTaskId: string; crossTaskId: string; deliveryId: string; keyPrefix: string; toolRequestId: string; toolTaskId: string };
  /** WEB's own handoff, made after PAY's: a stream that replays up to it has passed theirs. */
  let webTaskId: string;

  const sessionOf = (org: Org, role: AdminRole): OidcSignIn => sessions.get(`${org}:${role}`) as OidcSignIn;
  const as =
    (org: Org, role: AdminRole) =>
    (test: request.Test): request.Test =>
      test.set('cookie', sessionOf(org, role).cookie).set('x-csrf-token', sessionOf(org, role).csrf);

  beforeAll(async () => {
    sink = await WebhookSink.start();
    provider = await startConsoleProvider([
      ...[PAY, WEB].flatMap((org) => ADMIN_ROLES.map((role) => personOf(org, role))),
      { sub: `newcomer-${suffix}`, claims: { email: `newcomer-${suffix}@people.test`, name: 'Newcomer' } },
    ]);
    relay = await RelayHarness.start({
      env: { ...consoleOidcEnv(provider), RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '50ms', RELAY_WEBHOOK_TIMEOUT_MS: '1000' },
    });
    // Alpha's webhook always fails: its delivery ends dead, for the bulk redelivery to leave alone.
    sink.plan(`/alpha-${suffix}`, [{ status: 500 }]);
    registerConsoleClient(provider, relay.url);
    for (const org of [PAY, WEB]) {
      for (const role of ADMIN_ROLES) {
        const result = await signInWithOidc(relay.url, personOf(org, role).sub);
        if (!isSignedIn(result)) throw new Error(`signing in as ${role} of ${org} answered ${result.status}: ${result.body}`);
        sessions.set(`${org}:${role}`, result);
      }
    }
    agents.alpha = await registerAgent(relay, { handle: `alpha@${PAY}`, name: 'Alpha', notification_webhook_url: sink.url(`/alpha-${suffix}`) });
    agents.beta = await registerAgent(relay, { handle: `beta@${PAY}`, name: 'Beta' });
    agents.gamma = await registerAgent(relay, { handle: `gamma@${WEB}`, name: 'Gamma' });
    agents.delta = await registerAgent(relay, { handle: `delta@${WEB}`, name: 'Delta' });
    // Beta's rule holds every handoff to it: one from its own org, one from WEB (decided by PAY, whose rule held it).
    await request(relay.url)
      .put(`/admin/agents/beta@${PAY}/trust`)
      .set(admin)
      .send({ allow: [`*@${WEB}`], hold: [{ name: 'everything' }] })
      .expect(200);
    pay.heldTaskId = await createTask(relay.url, agents.alpha, agents.beta, 'Within pay, held');
    pay.crossTaskId = await createTask(relay.url, agents.gamma, agents.beta, 'From web to pay, held');
    // Alpha's coding agent's tool prompts go to PAY's approvers.
    await request(relay.url)
      .put(`/admin/agents/alpha@${PAY}/trust`)
      .set(admin)
      .send({ tool_prompts: [{ name: 'people decide' }] })
      .expect(200);
    const toAlpha = await createTask(relay.url, agents.beta, agents.alpha, 'To alpha, notified by webhook');
    await ok(relay.url, agents.alpha.api_key, 'tasks/update', { task_id: toAlpha, transition: 'accept' });
    pay.toolRequestId = randomUUID();
    pay.toolTaskId = toAlpha;
    await ok(relay.url, agents.alpha.api_key, 'message/send', {
      task_id: toAlpha,
      message: {
        parts: [{ type: 'text', text: 'Permission needed: Bash' }],
        payload: {
          permission_request: {
            kind: 'permission_request',
            request_id: pay.toolRequestId,
            tool_name: 'Bash',
            tool_input: { command: 'make check' },
            client: 'claude-code',
            hook_event: 'PreToolUse',
            expires_at: new Date(Date.now() + 600_000).toISOString(),
            answered_by: 'approvers',
          },
        },
      },
    });
    pay.deliveryId = await eventually(async () => {
      const listed = await request(relay.url).get(`/admin/deliveries?task_id=${toAlpha}&status=dead`).set(admin).expect(200);
      const [delivery] = listed.body.deliveries as Array<{ id: string }>;
      if (!delivery) throw new Error('no dead delivery yet');
      return delivery.id;
    }, 30000);
    webTaskId = await createTask(relay.url, agents.gamma, agents.delta, 'Within web');
    pay.keyPrefix = agents.alpha.key.prefix;
  });

  afterAll(async () => {
    await relay?.stop();
    await provider?.stop();
    await sink?.stop();
  });

  it('gives each person the role their claim names, in their org only', () => {
    expect(sessionOf(PAY, 'approver').session).toMatchObject({ role: 'approver', grants: [{ org: PAY, role: 'approver' }] });
    expect(sessionOf(WEB, 'admin').session).toMatchObject({ role: 'admin', grants: [{ org: WEB, role: 'admin' }] });
  });

  /** A PAY object for each route param, so that an unscoped route would read or change it. */
  function payPath(path: string): string {
    const isDelivery = path.startsWith('/admin/deliveries/');
    return path
      .replace(':handle', `alpha@${PAY}`)
      .replace(':prefix', pay.keyPrefix)
      .replace(':name', PAY)
      .replace(/\/approvals\/:id\/tool-prompts\/:requestId/, `/approvals/${pay.toolTaskId}/tool-prompts/${pay.toolRequestId}`)
      .replace(':sub', `newcomer-${suffix}`)
      .replace(':id', isDelivery ? pay.deliveryId : pay.heldTaskId)
      .replace(/^\/admin\/search$/, '/admin/search?q=held');
  }

  /** A body the route would take if the caller were allowed (validation runs after the scope). */
  function bodyFor(route: AdminRoute): Record<string, unknown> {
    if (route.method === 'POST' && route.path === '/admin/agents') return { handle: `intruder@${PAY}`, name: 'Intruder' };
    if (route.path.endsWith('/trust')) return { allow: [`*@${WEB}`] };
    if (route.method === 'PATCH' && route.path.startsWith('/admin/agents')) return { description: 'changed by another org' };
    if (route.method === 'PATCH' && route.path.startsWith('/admin/orgs')) return { display_name: 'Taken over' };
    if (route.method === 'POST' && route.path === '/admin/orgs') return { name: `${PAY}-shadow` };
    if (route.path === '/admin/deliveries/redeliver') return { status: 'dead' };
    return { comment: 'another org decides', reason: 'another org decides' };
  }

  async function paySnapshot(): Promise<unknown> {
    const read = async (path: string) => (await request(relay.url).get(path).set(admin).expect(200)).body as Record<string, unknown>;
    const task = async (id: string) => {
      const { task: view } = (await read(`/admin/tasks/${id}`)) as { task: { state: string; hold: unknown } };
      return { state: view.state, hold: view.hold };
    };
    const delivery = await read(`/admin/deliveries/${pay.deliveryId}`);
    return {
      alpha: await read(`/admin/agents/alpha@${PAY}`),
      keys: await read(`/admin/agents/alpha@${PAY}/keys`),
      trust: await read(`/admin/agents/alpha@${PAY}/trust`),
      org: await read(`/admin/orgs/${PAY}`),
      held: await task(pay.heldTaskId),
      cross: await task(pay.crossTaskId),
      delivery: { status: delivery.status, attempts: delivery.attempts },
      intruder: (await request(relay.url).get(`/admin/agents/intruder@${PAY}`).set(admin)).status,
      toolPrompts: ((await read('/admin/approvals/tool-prompts')).items as Array<{ request: { request_id: string } }>).map((item) => item.request.request_id),
    };
  }

  it('refuses every admin route to every role of the other org: 404 for what is not theirs, 403 for the relay’s, lists without it; nothing changes', async () => {
    const routes = registeredAdminRoutes(relay);
    expect(routes.length).toBeGreaterThan(40);
    // A route the scope table does not name is refused to everyone; here it fails the test, so that none is added unscoped.
    expect(routes.filter((route) => routeScopeOf(route.method, route.path) === undefined).map((route) => `${route.method} ${route.path}`)).toEqual([]);
    const before = await paySnapshot();
    const outcomes: string[] = [];
    const leaks: string[] = [];
    for (const route of routes) {
      // Signing out acts on the caller's own session only.
      if (route.method === 'DELETE' && route.path === '/admin/session') continue;
      for (const role of ADMIN_ROLES) {
        const path = payPath(route.path);
        if (route.path === '/admin/events') {
          // The live stream, replayed from the start: up to WEB's handoff, nothing of PAY's alone.
          const { cookie } = sessionOf(WEB, role);
          const stream = await openSse(`${relay.url}/admin/events`, { cookie, 'last-event-id': '0' }, undefined);
          const seen: string[] = [];
          try {
            outcomes.push(`${role} of web: GET /admin/events → ${stream.status}`);
            if (stream.status !== 200) leaks.push(`${role} of web: GET /admin/events → ${stream.status}`);
            else {
              for (let event = await stream.next(); event !== undefined; event = await stream.next()) {
                if (event.event !== 'task') continue;
                seen.push(JSON.stringify(event.data));
                if (event.data.task_id === webTaskId) break;
              }
            }
          } finally {
            stream.close();
          }
          const payOnly = seen.filter((text) => text.includes(`alpha@${PAY}`) || text.includes(pay.heldTaskId));
          if (payOnly.length > 0 || !seen.some((text) => text.includes(webTaskId))) leaks.push(`${role} of web: GET /admin/events shows ${payOnly.join(', ')}`);
          continue;
        }
        const call = (request(relay.url) as unknown as Record<string, (path: string) => request.Test>)[route.method.toLowerCase()](path);
        const response = await as(WEB, role)(call).send(bodyFor(route));
        const text = JSON.stringify(response.body);
        const label = `${role} of web: ${route.method} ${route.path} → ${response.status}`;
        outcomes.push(label);
        if (!roleAllows(role, route.least)) {
          // Below the route's least role: refused, as not found when the object is another org's.
          const refused =
            (response.status === 403 && response.body.error?.reason === 'role_forbidden' && !text.includes(PAY)) ||
            (response.status === 404 && /_not_found$/.test(response.body.error?.reason ?? ''));
          if (!refused) leaks.push(`${label} (below the route's least role ${route.least}): ${text.slice(0, 200)}`);
        } else if (route.method === 'GET' && response.status === 200) {
          // A list: only what one of the caller's agents is party to (the handoff from WEB to PAY is WEB's too).
          const payOnly = [`alpha@${PAY}`, pay.heldTaskId, pay.deliveryId, pay.toolRequestId, `"name":"${PAY}"`].filter((marker) => text.includes(marker));
          if (!/^\/admin\/[a-z-]+$|^\/admin\/approvals(\/tool-prompts)?$/.test(route.path) || payOnly.length > 0)
            leaks.push(`${label}: shows ${payOnly.join(', ')}`);
        } else if (route.path === '/admin/deliveries/redeliver' && response.status === 202) {
          // A change of many, bounded to the caller's orgs: none of PAY's (the snapshot below says so).
          if (response.body.redelivered !== 0) leaks.push(`${label}: ${text.slice(0, 200)}`);
        } else if (response.status === 404) {
          if (!/_not_found$/.test(response.body.error?.reason ?? '')) leaks.push(`${label}: ${text.slice(0, 200)}`);
        } else if (response.status === 403) {
          if (response.body.error?.reason !== 'role_forbidden' || text.includes(PAY)) leaks.push(`${label}: ${text.slice(0, 200)}`);
        } else {
          leaks.push(`${label}: ${text.slice(0, 200)}`);
        }
      }
    }
    expect(leaks).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(200);
    expect(await paySnapshot()).toEqual(before);
  });

  it('answers an object of another org exactly as one that does not exist', async () => {
    const register = await as(
      WEB,
      'admin',
    )(request(relay.url).post('/admin/agents'))
      .send({ handle: `sneaky@${PAY}`, name: 'Sneaky' })
      .expect(404);
    expect(register.body.error).toMatchObject({ reason: 'org_not_found', data: { org: PAY } });
    await as(
      WEB,
      'admin',
    )(request(relay.url).post('/admin/agents'))
      .send({ handle: `own-${suffix}@${WEB}`, name: 'Own' })
      .expect(201);
    const theirs = await as(WEB, 'admin')(request(relay.url).get(`/admin/agents/alpha@${PAY}`)).expect(404);
    const nobodys = await as(WEB, 'admin')(request(relay.url).get(`/admin/agents/nobody@${PAY}`)).expect(404);
    expect(theirs.body.error.reason).toBe(nobodys.body.error.reason);
    const task = await as(WEB, 'viewer')(request(relay.url).get(`/admin/tasks/${pay.heldTaskId}`)).expect(404);
    const noTask = await as(WEB, 'viewer')(request(relay.url).get(`/admin/tasks/01J0000000000000000000000X`)).expect(404);
    expect(task.body.error.reason).toBe(noTask.body.error.reason);
  });

  it('lets each org’s people act on their own org as their role allows, and refuses a weaker role with 403 naming the org', async () => {
    for (const role of ADMIN_ROLES) {
      await as(PAY, role)(request(relay.url).get(`/admin/agents/alpha@${PAY}`)).expect(200);
      const listed = await as(PAY, role)(request(relay.url).get('/admin/agents?limit=200')).expect(200);
      const handles = (listed.body.items as Array<{ handle: string }>).map((agent) => agent.handle).sort();
      expect(handles).toEqual([`alpha@${PAY}`, `beta@${PAY}`]);
    }
    const refused = await as(
      PAY,
      'viewer',
    )(request(relay.url).put(`/admin/agents/alpha@${PAY}/trust`))
      .send({ allow: [] })
      .expect(403);
    expect(refused.body.error).toMatchObject({ reason: 'role_forbidden', data: { least_role: 'operator' } });
    const weakInOrg = await as(
      PAY,
      'approver',
    )(request(relay.url).put(`/admin/agents/alpha@${PAY}/trust`))
      .send({ allow: [] })
      .expect(403);
    expect(weakInOrg.body.error.message).toContain('operator');
    await as(
      PAY,
      'operator',
    )(request(relay.url).put(`/admin/agents/delta@${WEB}/trust`))
      .send({ allow: [] })
      .expect(404);
    await as(
      PAY,
      'operator',
    )(request(relay.url).put(`/admin/agents/alpha@${PAY}/trust`))
      .send({ allow: [`*@${PAY}`] })
      .expect(200);
    // An approver of PAY is refused a change that needs more, naming PAY; on WEB's agent the same call is not found.
    const named = await as(PAY, 'approver')(request(relay.url).delete(`/admin/agents/beta@${PAY}`)).expect(403);
    expect(named.body.error).toMatchObject({ reason: 'role_forbidden', data: { org: PAY, role: 'approver', least_role: 'operator' } });
    expect(named.body.error.message).toContain(`in ${PAY}`);
    const auditorWeak = await as(PAY, 'auditor')(request(relay.url).get(`/admin/approvals/${pay.heldTaskId}`)).expect(403);
    expect(auditorWeak.body.error.reason).toBe('role_forbidden');
  });

  it('shows a handoff between two orgs to both, and lets only the org whose rule held it decide it', async () => {
    for (const org of [PAY, WEB] as const) {
      const seen = await as(org, 'viewer')(request(relay.url).get(`/admin/tasks/${pay.crossTaskId}`)).expect(200);
      expect(seen.body.task.id).toBe(pay.crossTaskId);
      const queue = await as(org, 'viewer')(request(relay.url).get('/admin/approvals')).expect(200);
      expect((queue.body.items as Array<{ id: string }>).map((row) => row.id)).toContain(pay.crossTaskId);
    }
    const webQueue = await as(WEB, 'viewer')(request(relay.url).get('/admin/approvals')).expect(200);
    expect((webQueue.body.items as Array<{ id: string }>).map((row) => row.id)).not.toContain(pay.heldTaskId);

    await as(
      WEB,
      'approver',
    )(request(relay.url).post(`/admin/approvals/${pay.crossTaskId}/approve`))
      .send({ comment: 'ours too?' })
      .expect(404);
    const decided = await as(
      PAY,
      'approver',
    )(request(relay.url).post(`/admin/approvals/${pay.crossTaskId}/approve`))
      .send({ comment: 'pay’s rule, pay’s call' })
      .expect(200);
    expect(decided.body).toMatchObject({ hold: { outcome: 'approved' } });
    const audit = await request(relay.url).get('/admin/audit?limit=50').set(admin).expect(200);
    expect(
      (audit.body.items as Array<{ action: string; target: string; actor_sub: string }>).find(
        (row) => row.action === 'approval.approve' && row.target === pay.crossTaskId,
      ),
    ).toMatchObject({ actor_sub: `approver-of-${PAY}` });
    await ok(relay.url, agents.beta.api_key, 'tasks/get', { task_id: pay.crossTaskId });
  });

  it('gives a person a role in one org through the admin API, counted from their next sign-in', async () => {
    const sub = `newcomer-${suffix}`;
    const refused = await signInWithOidc(relay.url, sub);
    expect(isSignedIn(refused) ? 'signed in' : refused.status).toBe(403);
    const bad = await request(relay.url)
      .put(`/admin/people/${sub}/roles`)
      .set(admin)
      .send({ roles: ['payments:root'] })
      .expect(400);
    expect(bad.body.error.reason).toBe('invalid_params');
    const given = await request(relay.url)
      .put(`/admin/people/${sub}/roles`)
      .set(admin)
      .send({ roles: [`${PAY}:viewer`, `${PAY}:operator`] })
      .expect(200);
    expect(given.body).toMatchObject({ subject: sub, grants: [{ org: PAY, role: 'operator' }] });
    expect((await request(relay.url).get(`/admin/people/${sub}/roles`).set(admin).expect(200)).body.grants).toEqual([{ org: PAY, role: 'operator' }]);
    const session = await signInWithOidc(relay.url, sub);
    if (!isSignedIn(session)) throw new Error(`signing in answered ${session.status}`);
    expect(session.session).toMatchObject({ role: 'operator', grants: [{ org: PAY, role: 'operator' }] });
    await request(relay.url).get(`/admin/agents/beta@${PAY}/trust`).set('cookie', session.cookie).expect(200);
    await request(relay.url).get(`/admin/agents/gamma@${WEB}/trust`).set('cookie', session.cookie).expect(404);
    await request(relay.url).put(`/admin/people/${sub}/roles`).set(admin).send({ roles: [] }).expect(200);
    const after = await signInWithOidc(relay.url, sub);
    expect(isSignedIn(after) ? 'signed in' : after.status).toBe(403);
  });

  it('shows each org’s auditors only their org’s audit rows', async () => {
    const rowsOf = async (org: Org) =>
      (await as(org, 'auditor')(request(relay.url).get('/admin/audit?limit=200')).expect(200)).body.items as Array<{
        action: string;
        org: string | null;
        detail: Record<string, unknown>;
      }>;
    const payRows = await rowsOf(PAY);
    expect(payRows.map((row) => row.org)).toEqual(payRows.map(() => PAY));
    expect(payRows.map((row) => row.action)).toEqual(expect.arrayContaining(['agent.create', 'trust.put']));
    expect(payRows.find((row) => row.action === 'agent.create' && row.detail.handle === `alpha@${PAY}`)).toBeDefined();
    const webRows = await rowsOf(WEB);
    expect(webRows.length).toBeGreaterThan(0);
    expect(webRows.every((row) => row.org === WEB)).toBe(true);
    expect(JSON.stringify(webRows)).not.toContain(`alpha@${PAY}`);
  });

  it('shows a tool prompt to the people of its handoff’s orgs only', async () => {
    const ids = async (org: Org) =>
      (
        (await as(org, 'viewer')(request(relay.url).get('/admin/approvals/tool-prompts')).expect(200)).body.items as Array<{ request: { request_id: string } }>
      ).map((item) => item.request.request_id);
    expect(await ids(PAY)).toContain(pay.toolRequestId);
    expect(await ids(WEB)).not.toContain(pay.toolRequestId);
  });

  it('lists each org the deliveries to its own agents', async () => {
    const ids = async (org: Org) =>
      (
        (await as(org, 'auditor')(request(relay.url).get('/admin/deliveries?limit=500')).expect(200)).body.deliveries as Array<{
          id: string;
          target_handle: string;
        }>
      )
        .filter((delivery) => delivery.id === pay.deliveryId || !delivery.target_handle.endsWith(`@${org}`))
        .map((delivery) => delivery.id);
    expect(await ids(PAY)).toEqual([pay.deliveryId]);
    expect(await ids(WEB)).toEqual([]);
  });

  it('sums the overview over the caller’s orgs only', async () => {
    const relayWide = await request(relay.url).get('/admin/overview').set(admin).expect(200);
    const web = await as(WEB, 'auditor')(request(relay.url).get('/admin/overview')).expect(200);
    expect(relayWide.body.delivery_failures.dead).toBeGreaterThanOrEqual(1);
    expect(web.body.delivery_failures).toEqual({ failed: 0, dead: 0 });
    const pay = await as(PAY, 'auditor')(request(relay.url).get('/admin/overview')).expect(200);
    expect(pay.body.delivery_failures.dead).toBe(1);
    if (web.body.oldest_pending)
      expect([web.body.oldest_pending.sender, web.body.oldest_pending.recipient].some((handle: string) => handle.endsWith(`@${WEB}`))).toBe(true);
    const created = (body: { per_minute: Array<{ created: number }> }) => body.per_minute.reduce((sum, minute) => sum + minute.created, 0);
    expect(created(web.body)).toBeLessThan(created(relayWide.body));
  });

  it('filters task lists and search to the caller’s orgs', async () => {
    const webTasks = await as(WEB, 'viewer')(request(relay.url).get('/admin/tasks?limit=100')).expect(200);
    for (const row of webTasks.body.items as Array<{ sender: { handle: string }; recipient: { handle: string } }>) {
      expect([row.sender.handle, row.recipient.handle].some((handle) => handle.endsWith(`@${WEB}`))).toBe(true);
    }
    const payTasks = await as(PAY, 'auditor')(request(relay.url).get('/admin/tasks?limit=100')).expect(200);
    expect(payTasks.body.items.length).toBeGreaterThanOrEqual(3);
    expect(JSON.stringify(payTasks.body)).not.toContain(`delta@${WEB}`);
    const found = await as(WEB, 'viewer')(request(relay.url).get('/admin/search?q=held')).expect(200);
    expect(JSON.stringify(found.body)).not.toContain(pay.heldTaskId);
  });

  it('narrows the agents, tasks and search lists to one org with ?org=, within the caller’s orgs only', async () => {
    const rowsOf = (body: { items: Array<{ sender: { handle: string }; recipient: { handle: string } }> }) =>
      body.items.map((row) => [row.sender.handle, row.recipient.handle]);
    const relayWide = await request(relay.url).get(`/admin/tasks?org=${WEB}&limit=200`).set(admin).expect(200);
    expect(rowsOf(relayWide.body).length).toBeGreaterThanOrEqual(2);
    expect(rowsOf(relayWide.body).every((pair) => pair.some((handle) => handle.endsWith(`@${WEB}`)))).toBe(true);
    expect(relayWide.body.items.map((row: { id: string }) => row.id)).toEqual(expect.arrayContaining([webTaskId, pay.crossTaskId]));
    const agentsOfPay = await request(relay.url).get(`/admin/agents?org=${PAY}&limit=200`).set(admin).expect(200);
    expect((agentsOfPay.body.items as Array<{ handle: string }>).map((agent) => agent.handle).sort()).toEqual([`alpha@${PAY}`, `beta@${PAY}`]);
    const ownTasks = await as(WEB, 'viewer')(request(relay.url).get(`/admin/tasks?org=${WEB}&limit=200`)).expect(200);
    expect(ownTasks.body.items.map((row: { id: string }) => row.id)).toEqual(expect.arrayContaining([webTaskId, pay.crossTaskId]));

    // Another org's name answers as a name no org has: the filter cannot tell that it exists.
    const nobody = `nobody-${suffix}`;
    for (const path of ['/admin/tasks?org=', '/admin/agents?org=', '/admin/search?q=held&org=']) {
      const theirs = await as(WEB, 'viewer')(request(relay.url).get(`${path}${PAY}`)).expect(404);
      const none = await as(WEB, 'viewer')(request(relay.url).get(`${path}${nobody}`)).expect(404);
      expect([path, theirs.body.error.reason, none.body.error.reason]).toEqual([path, 'org_not_found', 'org_not_found']);
      expect(JSON.stringify(theirs.body.error).replaceAll(PAY, 'X')).toBe(JSON.stringify(none.body.error).replaceAll(nobody, 'X'));
      await request(relay.url).get(`${path}${nobody}`).set(admin).expect(404);
    }
    const invalid = await request(relay.url).get('/admin/tasks?org=Not%20an%20org').set(admin).expect(400);
    expect(invalid.body.error).toMatchObject({ reason: 'invalid_params', data: { field: 'org' } });
    // An agent of another org as the filter is not found either, as an agent that does not exist.
    const theirAgent = await as(WEB, 'viewer')(request(relay.url).get(`/admin/tasks?agent=alpha@${PAY}`)).expect(404);
    const noAgent = await as(WEB, 'viewer')(request(relay.url).get(`/admin/tasks?agent=nobody@${PAY}`)).expect(404);
    expect(theirAgent.body.error.reason).toBe('agent_not_found');
    expect(noAgent.body.error.reason).toBe('agent_not_found');
  });

  it('lists the people given roles in an org to that org’s people, and to no other org', async () => {
    const sub = `listed-${suffix}`;
    await request(relay.url)
      .put(`/admin/people/${sub}/roles`)
      .set(admin)
      .send({ roles: [`${PAY}:approver`, `${WEB}:auditor`] })
      .expect(200);
    const people = await as(PAY, 'auditor')(request(relay.url).get(`/admin/orgs/${PAY}/people`)).expect(200);
    expect(people.body).toMatchObject({ org: PAY, issuer: provider.issuer, next_cursor: null });
    expect(people.body.items).toEqual([{ subject: sub, role: 'approver', updated_at: expect.any(String) }]);
    const ofWeb = await request(relay.url).get(`/admin/orgs/${WEB}/people?limit=1`).set(admin).expect(200);
    expect(ofWeb.body.items).toEqual([{ subject: sub, role: 'auditor', updated_at: expect.any(String) }]);
    const theirs = await as(WEB, 'admin')(request(relay.url).get(`/admin/orgs/${PAY}/people`)).expect(404);
    const none = await request(relay.url).get(`/admin/orgs/nobody-${suffix}/people`).set(admin).expect(404);
    expect([theirs.body.error.reason, none.body.error.reason]).toEqual(['org_not_found', 'org_not_found']);
    await request(relay.url).put(`/admin/people/${sub}/roles`).set(admin).send({ roles: [] }).expect(200);
    expect((await request(relay.url).get(`/admin/orgs/${PAY}/people`).set(admin).expect(200)).body.items).toEqual([]);
  });
});
