import request from 'supertest';
import { AgentAuthenticator } from '../apps/edge/src/auth/auth.module';
import { registerAgent, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('admin API: agents, keys and trust policies', () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start();
  });

  afterAll(async () => {
    await relay?.stop();
  });

  const authenticate = (headers: Record<string, string>, edge = relay.edge) => edge.get(AgentAuthenticator).authenticate(headers);

  describe('admin token', () => {
    it('answers 401 without, or with a wrong, token on every admin route', async () => {
      const routes: Array<[string, string]> = [
        ['post', '/admin/agents'],
        ['get', '/admin/agents'],
        ['get', '/admin/agents/bob@acme'],
        ['patch', '/admin/agents/bob@acme'],
        ['delete', '/admin/agents/bob@acme'],
        ['post', '/admin/agents/bob@acme/keys'],
        ['delete', '/admin/agents/bob@acme/keys/ah_live_AAAAAAAA'],
        ['put', '/admin/agents/bob@acme/trust'],
        ['get', '/admin/agents/bob@acme/trust'],
        ['post', '/admin/agents/bob@acme/webhook-secret'],
        ['get', '/admin/agents/bob@acme/upstream'],
        ['post', '/admin/agents/bob@acme/upstream/refresh'],
        ['post', '/admin/agents/bob@acme/upstream/pending-change/accept'],
        ['post', '/admin/agents/bob@acme/upstream/pending-change/reject'],
        ['put', '/admin/agents/bob@acme/upstream/tls'],
        ['delete', '/admin/agents/bob@acme/upstream/tls'],
        ['get', '/admin/tasks/some-task/upstream-calls'],
      ];
      for (const [method, path] of routes) {
        for (const authorization of [
          undefined,
          'Bearer wrong-token-0123456789abcdef',
          `Bearer ${TEST_ADMIN_TOKEN}x`,
          TEST_ADMIN_TOKEN,
          `Basic ${TEST_ADMIN_TOKEN}`,
        ]) {
          const call = (request(relay.url) as unknown as Record<string, (path: string) => request.Test>)[method](path);
          if (authorization) call.set('authorization', authorization);
          const response = await call.send({});
          expect([method, path, authorization, response.status]).toEqual([method, path, authorization, 401]);
          expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
          expect(response.body.error.reason).toBe('unauthenticated');
        }
      }
    });

    it('never takes an agent key as the admin token, nor the admin token as an agent key', async () => {
      const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
      await request(relay.url).get('/admin/agents').set('authorization', `Bearer ${bob.api_key}`).expect(401);
      await request(relay.url).get('/admin/agents').set('x-api-key', bob.api_key).expect(401);
      await expect(authenticate({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` })).rejects.toMatchObject({ reason: 'unauthenticated' });
      await expect(authenticate({ 'x-api-key': TEST_ADMIN_TOKEN })).rejects.toMatchObject({ reason: 'unauthenticated' });
    });

    it('answers 401 to everything when RELAY_ADMIN_TOKEN is unset', async () => {
      const closed = await RelayHarness.start({ env: { RELAY_ADMIN_TOKEN: '' }, services: ['directory'] });
      try {
        const response = await request(closed.url).get('/admin/agents').set(admin).expect(401);
        expect(response.body.error.message).toMatch(/RELAY_ADMIN_TOKEN/);
        await request(closed.url).post('/admin/agents').set('authorization', 'Bearer ').send({ handle: 'x@y', name: 'X' }).expect(401);
      } finally {
        await closed.stop();
      }
    });
  });

  describe('agents', () => {
    it('registers with 201 {agent, api_key} and refuses a taken handle with 409', async () => {
      const handle = uniqueHandle('dana', 'acme');
      const response = await request(relay.url)
        .post('/admin/agents')
        .set(admin)
        .send({
          handle: handle.toUpperCase(),
          name: 'Dana',
          role: 'ops',
          skills: ['k8s'],
          email: 'dana@example.com',
          notification_webhook_url: 'http://127.0.0.1:9/hook',
        })
        .expect(201);
      expect(response.body.agent).toMatchObject({
        handle,
        name: 'Dana',
        role: 'ops',
        skills: ['k8s'],
        email: 'dana@example.com',
        notification_webhook_url: 'http://127.0.0.1:9/hook',
        disabled: false,
      });
      expect(response.body.api_key).toMatch(/^ah_live_[A-Z2-7]{32}$/);
      expect(response.body).toHaveProperty('webhook_secret');
      const taken = await request(relay.url).post('/admin/agents').set(admin).send({ handle, name: 'Dana again' }).expect(409);
      expect(taken.body.error.reason).toBe('handle_taken');
    });

    it('answers 400 naming the field for an invalid handle, URL, email or unknown field', async () => {
      const cases: Array<[Record<string, unknown>, string]> = [
        [{ name: 'No handle' }, 'handle'],
        [{ handle: 'no-at-sign', name: 'X' }, 'handle'],
        [{ handle: 'two@at@signs', name: 'X' }, 'handle'],
        [{ handle: 'sp ace@acme', name: 'X' }, 'handle'],
        [{ handle: 'ok@acme' }, 'name'],
        [{ handle: 'ok@acme', name: '' }, 'name'],
        [{ handle: 'ok@acme', name: 'X', notification_webhook_url: 'not a url' }, 'notification_webhook_url'],
        [{ handle: 'ok@acme', name: 'X', slack_webhook_url: 'ftp://hooks.example/x' }, 'slack_webhook_url'],
        [{ handle: 'ok@acme', name: 'X', email: 'nope' }, 'email'],
        [{ handle: 'ok@acme', name: 'X', skills: 'react' }, 'skills'],
        [{ handle: 'ok@acme', name: 'X', metadata: 'x' }, 'metadata'],
        [{ handle: 'ok@acme', name: 'X', api_key: 'ah_live_x' }, 'api_key'],
      ];
      for (const [body, field] of cases) {
        const response = await request(relay.url).post('/admin/agents').set(admin).send(body);
        expect([body, response.status]).toEqual([body, 400]);
        expect(response.body.error.reason).toBe('invalid_params');
        expect(response.body.error.fields.map((entry: { field: string }) => entry.field)).toContain(field);
        expect(response.body.error.message).toContain(field);
      }
      await request(relay.url).get('/admin/agents/ok@acme').set(admin).expect(404);
      const notAnObject = await request(relay.url).post('/admin/agents').set(admin).send(['ok@acme']).expect(400);
      expect(notAnObject.body.error.fields[0].field).toBe('body');
      const malformed = await request(relay.url)
        .post('/admin/agents')
        .set(admin)
        .set('content-type', 'application/json')
        .send('{"handle": "ok@acme",')
        .expect(400);
      expect(JSON.stringify(malformed.body)).toMatch(/Invalid JSON body/);
    });

    it('gets, updates and lists agents with a cursor', async () => {
      const org = `list${Math.random().toString(36).slice(2, 7)}`;
      const handles = ['a', 'b', 'c', 'd', 'e'].map((name) => `${name}@${org}`);
      for (const handle of handles) await registerAgent(relay, { handle, name: handle });
      const got = await request(relay.url).get(`/admin/agents/${handles[0]}`).set(admin).expect(200);
      expect(got.body).toMatchObject({ handle: handles[0], disabled: false });
      const encoded = await request(relay.url)
        .get(`/admin/agents/${encodeURIComponent(handles[0].toUpperCase())}`)
        .set(admin)
        .expect(200);
      expect(encoded.body.handle).toBe(handles[0]);
      expect((await request(relay.url).get('/admin/agents/%25zz@acme').set(admin).expect(404)).body.error.reason).toBe('agent_not_found');

      const patched = await request(relay.url)
        .patch(`/admin/agents/${handles[0]}`)
        .set(admin)
        .send({ name: 'Alpha', role: 'lead', skills: ['go'], metadata: { repos_owned: ['svc/'] }, slack_webhook_url: 'https://hooks.slack.example/T/B/X' })
        .expect(200);
      expect(patched.body).toMatchObject({ handle: handles[0], name: 'Alpha', role: 'lead', skills: ['go'], metadata: { repos_owned: ['svc/'] } });
      const cleared = await request(relay.url).patch(`/admin/agents/${handles[0]}`).set(admin).send({ role: null, slack_webhook_url: null }).expect(200);
      expect(cleared.body).toMatchObject({ name: 'Alpha', role: null, slack_webhook_url: null });
      const badPatch = await request(relay.url).patch(`/admin/agents/${handles[0]}`).set(admin).send({ name: null }).expect(400);
      expect(badPatch.body.error.fields[0].field).toBe('name');
      await request(relay.url).patch(`/admin/agents/${handles[0]}`).set(admin).send({ handle: 'new@acme' }).expect(400);
      await request(relay.url).patch(`/admin/agents/nobody@${org}`).set(admin).send({ name: 'X' }).expect(404);

      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: request.Response = await request(relay.url)
          .get('/admin/agents')
          .query(cursor ? { limit: 2, cursor } : { limit: 2 })
          .set(admin)
          .expect(200);
        expect(page.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.body.items.map((agent: { handle: string }) => agent.handle));
        cursor = page.body.next_cursor;
      } while (cursor);
      expect(seen.filter((handle) => handle.endsWith(`@${org}`))).toEqual(handles);
      expect([...seen].sort()).toEqual(seen);
      await request(relay.url).get('/admin/agents').query({ limit: 0 }).set(admin).expect(400);
      await request(relay.url).get('/admin/agents').query({ cursor: 'garbage' }).set(admin).expect(400);
    });

    it('disables an agent: its keys stop working, it leaves the default list, and it stays readable to admins', async () => {
      const erin = await registerAgent(relay, { handle: uniqueHandle('erin', 'acme'), name: 'Erin' });
      await expect(authenticate({ authorization: `Bearer ${erin.api_key}` })).resolves.toMatchObject({ handle: erin.agent.handle });
      const disabled = await request(relay.url).delete(`/admin/agents/${erin.agent.handle}`).set(admin).expect(200);
      expect(disabled.body).toMatchObject({ handle: erin.agent.handle, disabled: true, disabled_at: expect.any(String) });
      await expect(authenticate({ authorization: `Bearer ${erin.api_key}` })).rejects.toMatchObject({ reason: 'unauthenticated' });
      await request(relay.url).get(`/admin/agents/${erin.agent.handle}`).set(admin).expect(200);
      await request(relay.url).post(`/admin/agents/${erin.agent.handle}/keys`).set(admin).expect(409);
      const all = await request(relay.url).get('/admin/agents').query({ include_disabled: 'true', limit: 200 }).set(admin).expect(200);
      const active = await request(relay.url).get('/admin/agents').query({ limit: 200 }).set(admin).expect(200);
      expect(all.body.items.map((agent: { handle: string }) => agent.handle)).toContain(erin.agent.handle);
      expect(active.body.items.map((agent: { handle: string }) => agent.handle)).not.toContain(erin.agent.handle);
    });
  });

  describe('keys', () => {
    it('authenticates with Authorization: Bearer and with X-API-Key, and refuses bad headers', async () => {
      const fay = await registerAgent(relay, { handle: uniqueHandle('fay', 'acme'), name: 'Fay' });
      const expected = { id: fay.agent.id, handle: fay.agent.handle, name: 'Fay', role: null, org: 'acme' };
      await expect(authenticate({ authorization: `Bearer ${fay.api_key}` })).resolves.toEqual(expected);
      await expect(authenticate({ authorization: `bearer ${fay.api_key}` })).resolves.toEqual(expected);
      await expect(authenticate({ 'x-api-key': fay.api_key })).resolves.toEqual(expected);
      const badHeaders: Array<Record<string, string>> = [
        {},
        { authorization: fay.api_key },
        { authorization: `Basic ${fay.api_key}` },
        { 'x-api-key': '' },
        { authorization: 'Bearer ah_live_short' },
      ];
      for (const headers of badHeaders) {
        await expect(authenticate(headers)).rejects.toMatchObject({ reason: 'unauthenticated' });
      }
    });

    it('rotates: a new key works next to the old one until the old one is revoked, at once on every edge replica', async () => {
      const gus = await registerAgent(relay, { handle: uniqueHandle('gus', 'acme'), name: 'Gus' });
      const secondEdge = await relay.startEdge();
      const rotated = await request(relay.url).post(`/admin/agents/${gus.agent.handle}/keys`).set(admin).expect(201);
      expect(rotated.body.api_key).toMatch(/^ah_live_[A-Z2-7]{32}$/);
      expect(rotated.body.api_key).not.toBe(gus.api_key);
      expect(rotated.body.key.prefix).toBe(rotated.body.api_key.slice(0, 16));
      for (const edge of [relay.edge, secondEdge]) {
        await expect(authenticate({ 'x-api-key': gus.api_key }, edge)).resolves.toMatchObject({ handle: gus.agent.handle });
        await expect(authenticate({ 'x-api-key': rotated.body.api_key }, edge)).resolves.toMatchObject({ handle: gus.agent.handle });
      }
      const keys = await request(relay.url).get(`/admin/agents/${gus.agent.handle}/keys`).set(admin).expect(200);
      expect(keys.body.items.map((key: { prefix: string }) => key.prefix)).toEqual([gus.key.prefix, rotated.body.key.prefix]);
      expect(JSON.stringify(keys.body)).not.toContain(gus.api_key);

      const revoked = await request(relay.url).delete(`/admin/agents/${gus.agent.handle}/keys/${gus.key.prefix}`).set(admin).expect(200);
      expect(revoked.body).toMatchObject({ prefix: gus.key.prefix, revoked_at: expect.any(String) });
      for (const edge of [secondEdge, relay.edge]) {
        await expect(authenticate({ 'x-api-key': gus.api_key }, edge)).rejects.toMatchObject({ reason: 'unauthenticated' });
        await expect(authenticate({ 'x-api-key': rotated.body.api_key }, edge)).resolves.toMatchObject({ handle: gus.agent.handle });
      }
      await request(relay.url).delete(`/admin/agents/${gus.agent.handle}/keys/${gus.key.prefix}`).set(admin).expect(404);
      await request(relay.url).delete(`/admin/agents/${gus.agent.handle}/keys/not-a-prefix`).set(admin).expect(400);
    });
  });

  describe('trust policies', () => {
    it('reads the default policy, and replaces it from JSON and from trust.yaml', async () => {
      const hal = await registerAgent(relay, { handle: uniqueHandle('hal', 'acme'), name: 'Hal' });
      const path = `/admin/agents/${hal.agent.handle}/trust`;
      const initial = await request(relay.url).get(path).set(admin).expect(200);
      expect(initial.body).toEqual({ handle: hal.agent.handle, allow: [], block: [], hold: [], tool_prompts: [], chain: {}, updated_at: null });

      const fromJson = await request(relay.url)
        .put(path)
        .set(admin)
        .send({ allow: ['Carol@Partner', '*@partner'], block: ['mallory@acme'] })
        .expect(200);
      expect(fromJson.body).toMatchObject({
        handle: hal.agent.handle,
        allow: ['carol@partner', '*@partner'],
        block: ['mallory@acme'],
        updated_at: expect.any(String),
      });

      const yaml = [`# trust.yaml`, `agent: ${hal.agent.handle}`, `allow:`, `  - "*@vendor"`, `block:`, `  - eve@acme`, `  - "*@evil"`, ''].join('\n');
      const fromYaml = await request(relay.url).put(path).set(admin).set('content-type', 'application/yaml').send(yaml).expect(200);
      expect(fromYaml.body).toMatchObject({ allow: ['*@vendor'], block: ['eve@acme', '*@evil'] });
      const read = await request(relay.url).get(path).set(admin).expect(200);
      expect(read.body).toMatchObject({ allow: ['*@vendor'], block: ['eve@acme', '*@evil'] });
      const withCharset = await request(relay.url)
        .put(path)
        .set(admin)
        .set('content-type', 'application/yaml; charset=utf-8')
        .send('allow: ["*@vendor"]\n')
        .expect(200);
      expect(withCharset.body).toMatchObject({ allow: ['*@vendor'], block: [], hold: [] });
    });

    it('keeps hold rules, from JSON and from trust.yaml, as the rule schema reads them', async () => {
      const uma = await registerAgent(relay, { handle: uniqueHandle('uma', 'acme'), name: 'Uma' });
      const path = `/admin/agents/${uma.agent.handle}/trust`;
      const rule = { name: 'external proposals', senders: ['CI-*@Partner'], outside_org: true, intents: ['propose_action'], four_eyes: true };
      const fromJson = await request(relay.url)
        .put(path)
        .set(admin)
        .send({ allow: ['*@partner'], hold: [rule] })
        .expect(200);
      expect(fromJson.body.hold).toEqual([{ ...rule, senders: ['ci-*@partner'] }]);
      const yaml = ['allow: ["*@partner"]', 'hold:', '  - name: migrations', '    paths: ["db/migrations/**"]', '    expires_after_minutes: 60', ''].join('\n');
      const fromYaml = await request(relay.url).put(path).set(admin).set('content-type', 'application/yaml').send(yaml).expect(200);
      expect(fromYaml.body.hold).toEqual([{ name: 'migrations', paths: ['db/migrations/**'], expires_after_minutes: 60 }]);
      expect((await request(relay.url).get(path).set(admin).expect(200)).body.hold).toEqual(fromYaml.body.hold);
      // A policy without hold rules leaves none.
      expect((await request(relay.url).put(path).set(admin).send({ allow: [] }).expect(200)).body.hold).toEqual([]);
    });

    it('keeps tool-prompt rules from JSON and trust.yaml, and answers 400 naming the place of a bad one', async () => {
      const wes = await registerAgent(relay, { handle: uniqueHandle('wes', 'acme'), name: 'Wes' });
      const path = `/admin/agents/${wes.agent.handle}/trust`;
      const rule = { name: 'outside senders', senders: ['*@Partner'], outside_org: true, four_eyes: true };
      const fromJson = await request(relay.url)
        .put(path)
        .set(admin)
        .send({ allow: ['*@partner'], tool_prompts: [rule] })
        .expect(200);
      expect(fromJson.body).toMatchObject({ hold: [], tool_prompts: [{ ...rule, senders: ['*@partner'] }] });
      const yaml = ['allow: ["*@partner"]', 'tool_prompts:', '  - name: diffs', '    artifact_kinds: [file_diff]', ''].join('\n');
      const fromYaml = await request(relay.url).put(path).set(admin).set('content-type', 'application/yaml').send(yaml).expect(200);
      expect(fromYaml.body.tool_prompts).toEqual([{ name: 'diffs', artifact_kinds: ['file_diff'] }]);
      expect((await request(relay.url).get(path).set(admin).expect(200)).body.tool_prompts).toEqual(fromYaml.body.tool_prompts);
      const refusals: Array<[unknown, RegExp]> = [
        [[{ name: 'x', expires_after_minutes: 5 }], /tool_prompts\[0\]/],
        [[{ name: 'twice' }, { name: 'twice' }], /tool_prompts\[1\]\.name: another rule is already named "twice"/],
      ];
      for (const [toolPrompts, message] of refusals) {
        const refused = await request(relay.url).put(path).set(admin).send({ tool_prompts: toolPrompts }).expect(400);
        expect(refused.body.error.fields[0].field).toBe('tool_prompts');
        expect(refused.body.error.message).toMatch(message);
      }
      expect((await request(relay.url).get(path).set(admin).expect(200)).body.tool_prompts).toEqual(fromYaml.body.tool_prompts);
    });

    it('answers 400 naming the place of a bad hold rule, and writes nothing', async () => {
      const vic = await registerAgent(relay, { handle: uniqueHandle('vic', 'acme'), name: 'Vic' });
      const path = `/admin/agents/${vic.agent.handle}/trust`;
      const refusals: Array<[unknown, RegExp]> = [
        [[{ name: 'x', intents: ['launch_rockets'] }], /hold\[0\]\.intents\[0\]/],
        [[{ name: 'x', senders: ['not a pattern'] }], /hold\[0\]\.senders\[0\]: a sender is a handle/],
        [[{ name: 'x', colour: 'red' }], /hold\[0\]/],
        [[{ name: 'x', expires_after_minutes: 0 }], /hold\[0\]\.expires_after_minutes/],
        [[{ name: 'twice' }, { name: 'twice' }], /hold\[1\]\.name: another rule is already named "twice"/],
        [{ name: 'not a list' }, /hold: /],
      ];
      for (const [hold, message] of refusals) {
        const refused = await request(relay.url).put(path).set(admin).send({ hold }).expect(400);
        expect(refused.body.error.fields[0].field).toBe('hold');
        expect(refused.body.error.message).toMatch(message);
      }
      expect((await request(relay.url).get(path).set(admin).expect(200)).body).toMatchObject({ hold: [], updated_at: null });
    });

    it('answers 400 for a bad entry, a wrong agent, or YAML that does not parse; 404 for an unknown agent', async () => {
      const ivy = await registerAgent(relay, { handle: uniqueHandle('ivy', 'acme'), name: 'Ivy' });
      const path = `/admin/agents/${ivy.agent.handle}/trust`;
      const badEntry = await request(relay.url)
        .put(path)
        .set(admin)
        .send({ allow: ['not a handle'] })
        .expect(400);
      expect(badEntry.body.error.fields[0].field).toBe('allow');
      const wrongAgent = await request(relay.url)
        .put(path)
        .set(admin)
        .set('content-type', 'application/yaml')
        .send('agent: someone@else\nallow: []\n')
        .expect(400);
      expect(wrongAgent.body.error.fields[0].field).toBe('agent');
      const broken = await request(relay.url).put(path).set(admin).set('content-type', 'application/yaml').send('allow: [unclosed\n').expect(400);
      expect(broken.body.error.message).toMatch(/YAML/);
      const misplaced = await request(relay.url)
        .put(path)
        .set(admin)
        .set('content-type', 'application/yaml')
        .send('block: []\nallow:\n  - a@b\nallow: []\n')
        .expect(400);
      expect(misplaced.body.error.data).toMatchObject({ line: 4, column: 1 });
      expect(misplaced.body.error.message).toMatch(/line 4, column 1/);
      const unknownKey = await request(relay.url).put(path).set(admin).set('content-type', 'application/yaml').send('allowed:\n  - a@b\n').expect(400);
      expect(unknownKey.body.error.fields[0].field).toBe('allowed');
      await request(relay.url).put(`/admin/agents/nobody-${Date.now()}@acme/trust`).set(admin).send({ allow: [] }).expect(404);
    });
  });
});
