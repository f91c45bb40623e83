import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { migrateServiceSchema } from '@app/database';
import { directoryDataSourceOptions } from '../apps/directory/src/database/data-source';
import { DIRECTORY_MIGRATIONS } from '../apps/directory/src/database/migrations';
import { Orgs1765536600000 } from '../apps/directory/src/database/migrations/1765536600000-Orgs';
import { EXIT, run } from '../apps/cli/src/cli';
import { MetricsServer } from '@app/metrics';
import { registerAgent } from './support/agents';
import { eventually } from './support/eventually';
import { NoisyTenant } from './support/noisy-tenant';
import { ok, rpc, type RpcResponse } from './support/json-rpc';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/**
 * What a noisy tenant may add to another's median call beyond the 2× ratio: the noise runs in a
 * process of its own, and on a machine of few shared cores a runnable process takes CPU time from
 * the relay's whatever the relay does with its calls (a few of the scheduler's time slices).
 */
const ADDED_LATENCY_ALLOWANCE_MS = 10;
/**
 * Pairs of rounds, one with the noise off and one with it on, adjacent in time (their order
 * alternating), so each noisy round is compared with a control measured under the same load of the
 * machine; the median pair decides, so a burst of other work that lands on a few rounds does not.
 */
const ISOLATION_PAIRS = 10;
const CALLS_PER_ROUND = 6;
/** Each noisy agent calls on this many connections at once, every one in a closed loop. */
const NOISY_LOOPS_PER_KEY = 4;
/** The agents' own limit on the relay of the isolation tests: more than the quiet agent calls in a minute. */
const QUIET_AGENT_LIMIT = 2 * ISOLATION_PAIRS * CALLS_PER_ROUND + 60;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const round1 = (value: number): number => Math.round(value * 10) / 10;

/**
 * Measures the quiet agent's `tasks/list` (over a keep-alive connection) in pairs of rounds: one
 * with the noisy agents calling in closed loops from another process, each held at its limit, and
 * one with them idle. In the median pair, the noisy round's median is within 2× of the quiet
 * round's (or the allowance more).
 */
async function expectIsolated(relay: RelayHarness, noise: string, noisyKeys: string[], quietKey: string): Promise<void> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 'quiet', method: 'tasks/list', params: { filter: {} } });
  const timedCall = async (): Promise<number> => {
    const started = performance.now();
    const response = await fetch(`${relay.url}/a2a`, {
      method: 'POST',
      headers: { authorization: `Bearer ${quietKey}`, 'content-type': 'application/json' },
      body,
    });
    const answer = (await response.json()) as { error?: unknown };
    const taken = performance.now() - started;
    expect({ status: response.status, error: answer.error }).toEqual({ status: 200, error: undefined });
    return taken;
  };
  const round = async (): Promise<number> => {
    const taken: number[] = [];
    for (let call = 0; call < CALLS_PER_ROUND; call++) taken.push(await timedCall());
    return median(taken);
  };
  const tenant = await NoisyTenant.start({ url: relay.url, apiKeys: noisyKeys, loopsPerKey: NOISY_LOOPS_PER_KEY });
  try {
    await timedCall();
    const pairs: Array<{ quiet: number; noisy: number }> = [];
    const answered: Record<string, number> = {};
    const noisyRound = async (): Promise<number> => {
      await tenant.startRefused();
      try {
        return await round();
      } finally {
        for (const [status, count] of Object.entries(await tenant.stop())) answered[status] = (answered[status] ?? 0) + count;
      }
    };
    for (let index = 0; index < ISOLATION_PAIRS; index++) {
      if (index % 2 === 0) {
        const quiet = await round();
        pairs.push({ quiet, noisy: await noisyRound() });
      } else {
        const noisy = await noisyRound();
        pairs.push({ quiet: await round(), noisy });
      }
    }
    const allowed = ({ quiet }: { quiet: number }): number => Math.max(2 * quiet, quiet + ADDED_LATENCY_ALLOWANCE_MS);
    const figures = {
      noise,
      quiet_median_ms: round1(median(pairs.map((pair) => pair.quiet))),
      noisy_median_ms: round1(median(pairs.map((pair) => pair.noisy))),
      pairs_within_bound: pairs.filter((pair) => pair.noisy <= allowed(pair)).length,
      pairs_ms: pairs.map((pair) => [round1(pair.quiet), round1(pair.noisy)]),
      noisy_calls_answered: answered,
    };
    console.log(`tasks/list latency of a quiet agent, noise off and on: ${JSON.stringify(figures)}`);
    expect(answered['429']).toBeGreaterThan(0);
    expect(median(pairs.map((pair) => pair.noisy / allowed(pair)))).toBeLessThanOrEqual(1);
  } finally {
    await tenant.close();
  }
}

function uniqueOrg(name: string): string {
  return `${name}-${randomBytes(3).toString('hex')}`;
}

describe('orgs as records', () => {
  describe('made on first use (the default)', () => {
    let relay: RelayHarness;

    beforeAll(async () => {
      relay = await RelayHarness.start({ services: ['directory', 'notifier'] });
    });

    afterAll(async () => {
      await relay?.stop();
    });

    it('registers an agent in an org no one created, and the org then exists with the relay defaults', async () => {
      const org = uniqueOrg('web');
      await request(relay.url).get(`/admin/orgs/${org}`).set(admin).expect(404);
      await registerAgent(relay, { handle: `frank@${org}`, name: 'Frank' });
      const response = await request(relay.url).get(`/admin/orgs/${org}`).set(admin).expect(200);
      expect(response.body).toMatchObject({
        name: org,
        display_name: null,
        origin: 'first_use',
        agents: 1,
        quotas: { agents: null },
        defaults: { trust: null },
      });
    });

    it('creates, lists, reads and updates an org through the admin API, and audits the changes', async () => {
      const org = uniqueOrg('payments');
      const created = await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: org.toUpperCase(), display_name: 'Payments', quotas: { agents: 5 } })
        .expect(201);
      expect(created.body).toMatchObject({ name: org, display_name: 'Payments', origin: 'admin', agents: 0, quotas: { agents: 5 } });
      const again = await request(relay.url).post('/admin/orgs').set(admin).send({ name: org }).expect(409);
      expect(again.body.error).toMatchObject({ reason: 'org_exists', data: { org } });

      const updated = await request(relay.url)
        .patch(`/admin/orgs/${org}`)
        .set(admin)
        .send({ display_name: 'Payments team', quotas: { agents: null } })
        .expect(200);
      expect(updated.body).toMatchObject({ name: org, display_name: 'Payments team', quotas: { agents: null } });

      const names: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await request(relay.url)
          .get(`/admin/orgs?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
          .set(admin)
          .expect(200);
        names.push(...(page.body.items as Array<{ name: string }>).map((item) => item.name));
        cursor = page.body.next_cursor as string | null;
      } while (cursor);
      expect(names).toContain(org);
      expect([...names].sort()).toEqual(names);

      const audit = await request(relay.url).get('/admin/audit?limit=50').set(admin).expect(200);
      const actions = (audit.body.items as Array<{ action: string; target: string | null; detail: Record<string, unknown> }>).filter(
        (row) => row.target === org || row.detail.org === org,
      );
      expect(actions.map((row) => row.action).sort()).toEqual(['org.create', 'org.update']);
    });

    it('refuses bad input precisely and writes nothing', async () => {
      const bad = await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: '-web', quotas: { agents: -1 } })
        .expect(400);
      expect(bad.body.error.reason).toBe('invalid_params');
      const fields = (bad.body.error.fields as Array<{ field: string }>).map((field) => field.field).sort();
      expect(fields).toEqual(['name', 'quotas.agents']);
      await request(relay.url).get('/admin/orgs/-web').set(admin).expect(404);
      await request(relay.url)
        .patch(`/admin/orgs/${uniqueOrg('nobody')}`)
        .set(admin)
        .send({ display_name: 'x' })
        .expect(404);
    });

    it('refuses an agent past its org’s agents quota with an error naming the org and the quota', async () => {
      const org = uniqueOrg('small');
      await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: org, quotas: { agents: 2 } })
        .expect(201);
      await registerAgent(relay, { handle: `a@${org}`, name: 'A' });
      await registerAgent(relay, { handle: `b@${org}`, name: 'B' });
      const refused = await request(relay.url)
        .post('/admin/agents')
        .set(admin)
        .send({ handle: `c@${org}`, name: 'C' })
        .expect(409);
      expect(refused.body.error).toMatchObject({ reason: 'org_quota_exceeded', data: { org, quota: 'agents', limit: 2 } });
      expect(refused.body.error.message).toContain(org);
      await request(relay.url).get(`/admin/agents/c@${org}`).set(admin).expect(404);
      expect((await request(relay.url).get(`/admin/orgs/${org}`).set(admin).expect(200)).body.agents).toBe(2);
      const directory = relay.services.get('directory')![0];
      const scrape = PrometheusScrape.parse(await (await fetch(`${directory.get(MetricsServer).url}/metrics`)).text());
      expect(scrape.value('agentrelay_org_quota_rejections_total', { org, quota: 'agents' })).toBe(1);
    });

    it('creates, lists, shows and updates orgs from the CLI', async () => {
      const cli = async (...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
        let stdout = '';
        let stderr = '';
        const code = await run(
          argv,
          { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
          { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
        );
        return { code, stdout, stderr };
      };
      const org = uniqueOrg('cli');
      const created = await cli(
        'orgs',
        'create',
        org,
        '--display-name',
        'CLI team',
        '--max-agents',
        '3',
        '--requests-per-minute',
        '600',
        '--max-open-handoffs',
        '40',
        '--max-stored-bytes',
        '2M',
        '--max-upstream-in-flight',
        '4',
      );
      expect(created).toMatchObject({ code: EXIT.ok, stderr: '' });
      expect(created.stdout).toContain(`Created the org ${org}.`);
      expect(created.stdout).toContain('agents:        0 of at most 3');
      expect(created.stdout).toContain('calls:         at most 600 a minute across its agents');
      expect(created.stdout).toContain('open handoffs: at most 40 sent by its agents and not finished');
      expect(created.stdout).toContain('stored bytes:  at most 2097152 written by its agents into handoffs still stored');
      expect(created.stdout).toContain('upstream:      at most 4 deliveries to its upstream agents at once');
      const listed = await cli('orgs');
      expect(listed.stdout).toMatch(new RegExp(`^${org}\\s+CLI team\\s+0\\s+3\\s+600\\s+40\\s+2097152\\s+4$`, 'm'));
      const updated = await cli('orgs', 'update', org, '--max-agents', 'none', '--json');
      expect(JSON.parse(updated.stdout)).toMatchObject({ name: org, quotas: { agents: null, requests_per_minute: 600 }, display_name: 'CLI team' });
      const shown = await cli('orgs', 'show', org);
      expect(shown.stdout).toContain(`${org} (CLI team)`);
      const missing = await cli('orgs', 'show', uniqueOrg('nobody'));
      expect(missing.code).not.toBe(EXIT.ok);
      expect(missing.stderr).toContain('No org named');
      expect((await cli('orgs', 'update', org, '--max-agents', 'many')).code).toBe(EXIT.usage);
      expect((await cli('orgs', 'update', org, '--max-open-handoffs', 'lots')).code).toBe(EXIT.usage);
      expect((await cli('orgs', 'update', org, '--max-stored-bytes', '2T')).code).toBe(EXIT.usage);
      const storedNone = await cli('orgs', 'update', org, '--max-stored-bytes', 'none', '--max-upstream-in-flight', 'none', '--json');
      expect(JSON.parse(storedNone.stdout)).toMatchObject({ quotas: { stored_bytes: null, upstream_in_flight: null, open_handoffs: 40 } });
      const unlimited = await cli('orgs', 'update', org, '--max-open-handoffs', 'none', '--json');
      expect(JSON.parse(unlimited.stdout)).toMatchObject({ quotas: { open_handoffs: null, requests_per_minute: 600 } });

      const bounded = await cli('orgs', 'update', org, '--chain-bounds', '{"max_depth": 3, "pair_per_minute": 10}', '--json');
      expect(JSON.parse(bounded.stdout)).toMatchObject({ name: org, chain: { max_depth: 3, pair_per_minute: 10 } });
      expect((await cli('orgs', 'show', org)).stdout).toContain('chain bounds:  {"max_depth":3,"pair_per_minute":10}');
      const outOfRange = await cli('orgs', 'update', org, '--chain-bounds', '{"max_depth": 5000}');
      expect(outOfRange.code).not.toBe(EXIT.ok);
      expect(outOfRange.stderr).toContain('chain.max_depth');
      expect((await cli('orgs', 'update', org, '--chain-bounds', 'deep')).code).toBe(EXIT.usage);
      expect(JSON.parse((await cli('orgs', 'update', org, '--chain-bounds', 'none', '--json')).stdout)).toMatchObject({ chain: {} });
      expect((await cli('orgs', 'show', org)).stdout).toContain('chain bounds:  the relay’s');
    });

    it('starts a new agent of the org with the org’s default trust policy', async () => {
      const org = uniqueOrg('held');
      const defaults = { trust: { allow: ['*@partners'], hold: [{ name: 'outsiders', outside_org: true }] } };
      const created = await request(relay.url).post('/admin/orgs').set(admin).send({ name: org, defaults }).expect(201);
      expect(created.body.defaults.trust).toMatchObject({ allow: ['*@partners'], block: [], tool_prompts: [], chain: {} });
      await registerAgent(relay, { handle: `ana@${org}`, name: 'Ana' });
      const trust = await request(relay.url).get(`/admin/agents/ana@${org}/trust`).set(admin).expect(200);
      expect(trust.body).toMatchObject({ allow: ['*@partners'], block: [], hold: created.body.defaults.trust.hold });
    });
  });

  describe('created explicitly (RELAY_ORGS_EXPLICIT=true)', () => {
    let relay: RelayHarness;

    beforeAll(async () => {
      relay = await RelayHarness.start({ services: ['directory', 'notifier'], env: { RELAY_ORGS_EXPLICIT: 'true' } });
    });

    afterAll(async () => {
      await relay?.stop();
    });

    it('refuses registering in an org that does not exist, naming it, and registers once an admin created it', async () => {
      const org = uniqueOrg('ops');
      const refused = await request(relay.url)
        .post('/admin/agents')
        .set(admin)
        .send({ handle: `olga@${org}`, name: 'Olga' })
        .expect(404);
      expect(refused.body.error).toMatchObject({ reason: 'org_not_found', data: { org } });
      expect(refused.body.error.message).toContain(`The org ${org} does not exist`);
      await request(relay.url).get(`/admin/agents/olga@${org}`).set(admin).expect(404);
      await request(relay.url).get(`/admin/orgs/${org}`).set(admin).expect(404);

      await request(relay.url).post('/admin/orgs').set(admin).send({ name: org }).expect(201);
      await registerAgent(relay, { handle: `olga@${org}`, name: 'Olga' });
    });
  });

  describe('quotas', () => {
    let relay: RelayHarness;

    beforeAll(async () => {
      relay = await RelayHarness.start();
    });

    afterAll(async () => {
      await relay?.stop();
    });

    it('refuses calls past the org’s requests per minute across its agents, in both dialects, with a precise error and a metric; another org is not touched', async () => {
      const org = uniqueOrg('busy');
      const limit = 4;
      await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: org, quotas: { requests_per_minute: limit } })
        .expect(201);
      const first = await registerAgent(relay, { handle: `first@${org}`, name: 'First' });
      const second = await registerAgent(relay, { handle: `second@${org}`, name: 'Second' });
      const calm = await registerAgent(relay, { handle: `calm@${uniqueOrg('calm')}`, name: 'Calm' });
      // Windows are fixed minutes: a run that crosses one gets a fresh count, so at most two windows' worth pass.
      let allowed = 0;
      let refused: RpcResponse | undefined;
      for (let call = 0; call < 2 * limit + 2 && !refused; call++) {
        const response = await rpc(relay.url, (call % 2 === 0 ? first : second).api_key, 'tasks/list', { filter: {} });
        if (response.status === 429) refused = response;
        else {
          expect(response.status).toBe(200);
          allowed += 1;
        }
      }
      expect(refused).toBeDefined();
      expect(allowed).toBeGreaterThanOrEqual(limit);
      expect(allowed).toBeLessThanOrEqual(2 * limit);
      expect(refused?.headers['retry-after']).toMatch(/^[0-9]+$/);
      expect(refused?.body.error).toMatchObject({ code: -32003, data: { org, quota: 'requests_per_minute', limit } });
      expect(refused?.body.error?.message).toContain(`The org ${org} is at its quota of ${limit} requests per minute`);
      const v1 = await rpc(relay.url, second.api_key, 'ListTasks', {}, { headers: { 'a2a-version': '1.0' } });
      expect(v1.status).toBe(429);
      expect(v1.body.error?.code).toBe(-32003);
      expect(JSON.stringify(v1.body.error)).toContain(org);
      expect((await rpc(relay.url, calm.api_key, 'tasks/list', { filter: {} })).status).toBe(200);
      const scrape = PrometheusScrape.parse(await (await fetch(`${relay.edge.get(MetricsServer).url}/metrics`)).text());
      expect(scrape.value('agentrelay_org_quota_rejections_total', { org, quota: 'requests_per_minute' })).toBeGreaterThanOrEqual(2);
    });

    it('refuses a handoff past the sender org’s open handoffs, in both dialects, storing nothing; a finished handoff frees a place; another org is not touched', async () => {
      const org = uniqueOrg('open');
      const limit = 2;
      const created = await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: org, quotas: { open_handoffs: limit } })
        .expect(201);
      expect(created.body.quotas).toEqual({ agents: null, requests_per_minute: null, open_handoffs: limit, stored_bytes: null, upstream_in_flight: null });
      const sender = await registerAgent(relay, { handle: `sender@${org}`, name: 'Sender' });
      const teammate = await registerAgent(relay, { handle: `teammate@${org}`, name: 'Teammate' });
      const otherOrg = uniqueOrg('roomy');
      const outsider = await registerAgent(relay, { handle: `outsider@${otherOrg}`, name: 'Outsider' });
      const recipient = await registerAgent(relay, { handle: `recipient@${otherOrg}`, name: 'Recipient' });
      // The recipient admits the quota'd org, so the handoffs that count cross orgs as the quota's would.
      await request(relay.url)
        .put(`/admin/agents/${recipient.agent.handle}/trust`)
        .set(admin)
        .send({ allow: [`*@${org}`] })
        .expect(200);
      const db = new Client({ connectionString: testDatabaseUrl() });
      await db.connect();
      try {
        const storedFrom = async (agent: typeof sender): Promise<{ tasks: number; messages: number }> =>
          (
            await db.query<{ tasks: number; messages: number }>(
              `SELECT (SELECT count(*)::int FROM "tasks"."tasks" WHERE "sender_id" = $1) AS "tasks",
                      (SELECT count(*)::int FROM "tasks"."messages" m JOIN "tasks"."tasks" t ON t."id" = m."task_id" WHERE t."sender_id" = $1) AS "messages"`,
              [agent.agent.id],
            )
          ).rows[0];
        const handOffA2a = (from: typeof sender, text: string): Promise<RpcResponse> =>
          rpc(
            relay.url,
            from.api_key,
            'message/send',
            { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] }, configuration: { blocking: false } },
            { path: `/a2a/${recipient.agent.handle}` },
          );
        const handOffRelay = (from: typeof sender, text: string): Promise<RpcResponse> =>
          rpc(relay.url, from.api_key, 'message/send', { recipient: recipient.agent.handle, message: { role: 'user', parts: [{ type: 'text', text }] } });
        const first = await handOffA2a(sender, 'first');
        expect(first.body.error).toBeUndefined();
        // The second open handoff is the teammate's: the quota counts the org's senders together.
        const second = await handOffRelay(teammate, 'second');
        expect(second.body.error).toBeUndefined();
        const before = { sender: await storedFrom(sender), teammate: await storedFrom(teammate) };

        const refusedA2a = await handOffA2a(sender, 'one too many');
        expect(refusedA2a.status).toBe(409);
        expect(refusedA2a.body.error).toMatchObject({ code: -32046, data: { org, quota: 'open_handoffs', limit } });
        expect(refusedA2a.body.error?.message).toBe(`The org ${org} is at its quota of ${limit} open handoffs`);
        const refusedRelay = await handOffRelay(teammate, 'one too many');
        expect(refusedRelay.status).toBe(409);
        expect(refusedRelay.body.error).toMatchObject({ code: -32046, data: { reason: 'org_quota_exceeded', org, quota: 'open_handoffs', limit } });
        const refusedRest = await request(relay.url)
          .post(`/a2a/${recipient.agent.handle}/message:send`)
          .set({ 'x-api-key': sender.api_key, 'a2a-version': '1.0' })
          .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'one too many' }] }, configuration: { returnImmediately: true } });
        expect(refusedRest.status).toBe(409);
        expect(JSON.stringify(refusedRest.body)).toContain('open_handoffs');
        expect({ sender: await storedFrom(sender), teammate: await storedFrom(teammate) }).toEqual(before);

        // Another org sends to the same recipient as before.
        expect((await handOffRelay(outsider, 'from elsewhere')).body.error).toBeUndefined();

        const tasks = relay.services.get('tasks')![0];
        const scrape = PrometheusScrape.parse(await (await fetch(`${tasks.get(MetricsServer).url}/metrics`)).text());
        expect(scrape.value('agentrelay_org_quota_rejections_total', { org, quota: 'open_handoffs' })).toBe(3);

        // A finished handoff leaves the count: the next create passes, and the one after is refused again.
        const firstId = (first.body.result as { id: string }).id;
        await ok(relay.url, recipient.api_key, 'tasks/update', { task_id: firstId, transition: 'accept' });
        expect((await handOffA2a(sender, 'still one too many')).body.error).toMatchObject({ code: -32046 });
        await ok(relay.url, recipient.api_key, 'tasks/update', { task_id: firstId, transition: 'complete', result_summary: 'Done' });
        expect((await handOffA2a(sender, 'in the freed place')).body.error).toBeUndefined();
        expect((await handOffA2a(sender, 'past it again')).body.error).toMatchObject({ code: -32046, data: { org, quota: 'open_handoffs', limit } });
        expect((await storedFrom(sender)).tasks).toBe(before.sender.tasks + 1);

        // Cleared, the quota no longer holds.
        await request(relay.url)
          .patch(`/admin/orgs/${org}`)
          .set(admin)
          .send({ quotas: { open_handoffs: null } })
          .expect(200);
        expect((await handOffA2a(sender, 'no limit now')).body.error).toBeUndefined();
      } finally {
        await db.end();
      }
    });

    it('gives an org’s last open-handoffs place to exactly one of many concurrent handoffs', async () => {
      const org = uniqueOrg('racing');
      const limit = 3;
      await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: org, quotas: { open_handoffs: limit } })
        .expect(201);
      const senders = await Promise.all(
        Array.from({ length: 6 }, (_, index) => registerAgent(relay, { handle: `racer${index}@${org}`, name: `Racer ${index}` })),
      );
      const recipient = await registerAgent(relay, { handle: `recipient@${uniqueOrg('far')}`, name: 'Recipient' });
      await request(relay.url)
        .put(`/admin/agents/${recipient.agent.handle}/trust`)
        .set(admin)
        .send({ allow: [`*@${org}`] })
        .expect(200);
      const handOff = (from: (typeof senders)[number], text: string): Promise<RpcResponse> =>
        rpc(relay.url, from.api_key, 'message/send', { recipient: recipient.agent.handle, message: { role: 'user', parts: [{ type: 'text', text }] } });
      for (const text of ['first', 'second']) expect((await handOff(senders[0], text)).body.error).toBeUndefined();
      const answers = await Promise.all(senders.map((sender, index) => handOff(sender, `racing ${index}`)));
      expect(answers.filter((answer) => answer.body.error === undefined)).toHaveLength(1);
      for (const refused of answers.filter((answer) => answer.body.error !== undefined)) {
        expect(refused.body.error).toMatchObject({ code: -32046, data: { org, quota: 'open_handoffs', limit } });
      }
      const db = new Client({ connectionString: testDatabaseUrl() });
      await db.connect();
      try {
        const { rows } = await db.query<{ stored: number }>(`SELECT count(*)::int AS "stored" FROM "tasks"."tasks" WHERE "recipient_id" = $1`, [
          recipient.agent.id,
        ]);
        expect(rows[0].stored).toBe(limit);
      } finally {
        await db.end();
      }
    });

    it('lifts the limit for new calls once an admin clears it', async () => {
      const org = uniqueOrg('lifted');
      await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: org, quotas: { requests_per_minute: 1 } })
        .expect(201);
      const agent = await registerAgent(relay, { handle: `only@${org}`, name: 'Only' });
      await eventually(async () => expect((await rpc(relay.url, agent.api_key, 'tasks/list', { filter: {} })).status).toBe(429));
      const cleared = await request(relay.url)
        .patch(`/admin/orgs/${org}`)
        .set(admin)
        .send({ quotas: { requests_per_minute: null } })
        .expect(200);
      expect(cleared.body.quotas).toEqual({ agents: null, requests_per_minute: null, open_handoffs: null, stored_bytes: null, upstream_in_flight: null });
      await eventually(async () => expect((await rpc(relay.url, agent.api_key, 'tasks/list', { filter: {} })).status).toBe(200));
    });
  });

  describe('isolation: a tenant held at its limit and the others’ latency (measured)', () => {
    let relay: RelayHarness;

    beforeAll(async () => {
      // A low per-agent limit, so the agent-level case holds a noisy agent at it within a few calls;
      // the quiet agent makes fewer calls than this in any minute.
      relay = await RelayHarness.start({ env: { RELAY_RATE_LIMIT_PER_MINUTE: String(QUIET_AGENT_LIMIT) } });
    });

    afterAll(async () => {
      await relay?.stop();
    });

    it('keeps another org’s median latency within 2× of its own, measured in the same run, while a noisy org is held at its quota', async () => {
      const noisyOrg = uniqueOrg('noisy');
      await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: noisyOrg, quotas: { requests_per_minute: 20 } })
        .expect(201);
      const noisy = await Promise.all([1, 2, 3, 4].map((index) => registerAgent(relay, { handle: `noisy${index}@${noisyOrg}`, name: `Noisy ${index}` })));
      const quiet = await registerAgent(relay, { handle: `quiet@${uniqueOrg('quiet')}`, name: 'Quiet' });
      await expectIsolated(
        relay,
        'an org held at its requests_per_minute quota',
        noisy.map((agent) => agent.api_key),
        quiet.api_key,
      );
    }, 240000);

    it('keeps another agent’s median latency within 2× of its own, measured in the same run, while noisy agents are held at their own rate limit', async () => {
      const noisyOrg = uniqueOrg('loud');
      const noisy = await Promise.all([1, 2, 3, 4].map((index) => registerAgent(relay, { handle: `loud${index}@${noisyOrg}`, name: `Loud ${index}` })));
      const quiet = await registerAgent(relay, { handle: `calm@${uniqueOrg('calm')}`, name: 'Calm' });
      await expectIsolated(
        relay,
        'agents held at their own rate limit',
        noisy.map((agent) => agent.api_key),
        quiet.api_key,
      );
    }, 240000);
  });

  describe('the upgrade', () => {
    it('makes an org of every existing handle’s org, losing no agent (counted)', async () => {
      const base = new URL(testDatabaseUrl());
      const name = `relay_test_orgs_${randomBytes(4).toString('hex')}`;
      const maintenance = new Client({ connectionString: base.toString() });
      await maintenance.connect();
      await maintenance.query(`CREATE DATABASE "${name}"`);
      const url = new URL(base.toString());
      url.pathname = `/${name}`;
      try {
        const before = new DataSource({
          ...directoryDataSourceOptions(url.toString()),
          migrations: DIRECTORY_MIGRATIONS.slice(0, DIRECTORY_MIGRATIONS.indexOf(Orgs1765536600000)),
        });
        await before.initialize();
        await migrateServiceSchema(before);
        const handles = ['frank@web', 'wanda@web', 'ana@payments', 'paul@payments', 'pia@payments', 'olga@ops', 'x@a.b-c'];
        for (const handle of handles) {
          await before.query(`INSERT INTO "directory"."agents" ("handle", "name") VALUES ($1, $2)`, [handle, handle]);
        }
        await before.query(`UPDATE "directory"."agents" SET "disabled_at" = now() WHERE "handle" = 'olga@ops'`);
        await before.query(
          `INSERT INTO "directory"."admin_audit" ("actor", "action", "target") VALUES ('admin token', 'trust.put', 'ana@payments'), ('admin token', 'session.sign_in', 'a1b2c3d4e5f6')`,
        );
        await before.destroy();

        const after = new DataSource(directoryDataSourceOptions(url.toString()));
        await after.initialize();
        expect(await migrateServiceSchema(after)).toEqual(
          DIRECTORY_MIGRATIONS.slice(DIRECTORY_MIGRATIONS.indexOf(Orgs1765536600000)).map((migration) => migration.name),
        );
        const orgs: Array<{ name: string; origin: string; quota_agents: number | null }> = await after.query(
          `SELECT "name", "origin", "quota_agents" FROM "directory"."orgs" ORDER BY "name"`,
        );
        expect(orgs).toEqual(['a.b-c', 'ops', 'payments', 'web'].map((org) => ({ name: org, origin: 'first_use', quota_agents: null })));
        const audit: Array<{ action: string; org: string | null }> = await after.query(`SELECT "action", "org" FROM "directory"."admin_audit" ORDER BY "id"`);
        expect(audit).toEqual([
          { action: 'trust.put', org: 'payments' },
          { action: 'session.sign_in', org: null },
        ]);
        const agents: Array<{ count: string }> = await after.query(`SELECT count(*) FROM "directory"."agents"`);
        expect(Number(agents[0].count)).toBe(handles.length);
        await after.destroy();
      } finally {
        await maintenance.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await maintenance.end();
      }
    });
  });
});
