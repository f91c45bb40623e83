import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import request from 'supertest';
import type { Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { MetricsServer } from '@app/metrics';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, rpc, type Json } from './support/json-rpc';
import { McpAgent, textOf } from './support/mcp-agent';
import { parsePrometheusText } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { testDatabaseUrl } from './support/test-env';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const PAIR_PER_MINUTE = 5;
const BUDGET = 12;
/** The tables of the tasks schema a create writes to: the task, its message and artifacts, its events, its idempotency key, its audit. */
const CREATE_WRITES = ['tasks', 'messages', 'artifacts', 'outbox_events', 'idempotency_keys', 'audit_log'] as const;
const nonBlocking = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };

/**
 * Handoff chains (docs/chains.md) on the real relay: a handoff names the handoff it serves
 * (A2A referenceTaskIds through the official SDK client, the AgentRelay dialect's parent_task_id),
 * its parent, root and depth are read back, and the chain bounds refuse a loop, a chain too deep,
 * a chain past its budget and an echo storm between two agents, each with nothing stored and an
 * audit row.
 */
describe('handoff chains', () => {
  let relay: RelayHarness;
  let db: PgClient;
  let org: string;
  const agents: Record<string, RegisteredTestAgent> = {};

  const agent = async (name: string): Promise<RegisteredTestAgent> => {
    agents[name] ??= await registerAgent(relay, { handle: `${name}@${org}`, name });
    return agents[name];
  };

  /** A v0.3 message/send on the recipient's endpoint, naming `references` as the tasks it serves. */
  const sendV03 = (sender: RegisteredTestAgent, recipient: RegisteredTestAgent, text: string, references: string[] = []) =>
    rpc(
      relay.url,
      sender.api_key,
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'user',
          parts: [{ kind: 'text', text }],
          ...(references.length > 0 ? { referenceTaskIds: references } : {}),
        },
        configuration: { blocking: false },
      },
      { path: `/a2a/${recipient.agent.handle}` },
    );

  /** A handoff that must be created: its task id. */
  const handOff = async (sender: RegisteredTestAgent, recipient: RegisteredTestAgent, references: string[] = []): Promise<string> => {
    const response = await sendV03(sender, recipient, `from ${sender.agent.handle}`, references);
    if (response.body.error) throw new Error(`${sender.agent.handle} → ${recipient.agent.handle}: ${JSON.stringify(response.body.error)}`);
    return (response.body.result as Json).id as string;
  };

  /**
   * Rows in every table a create writes (this run's database is this file's alone): a refused send
   * must leave each count as it was.
   */
  const storedRows = async (): Promise<Record<string, number>> =>
    (await db.query(`SELECT ${CREATE_WRITES.map((table) => `(SELECT count(*)::int FROM "tasks"."${table}") AS "${table}"`).join(', ')}`)).rows[0] as Record<
      string,
      number
    >;

  const tasksFrom = async (sender: RegisteredTestAgent): Promise<number> =>
    Number((await db.query(`SELECT count(*) FROM "tasks"."tasks" WHERE "sender_id" = $1`, [sender.agent.id])).rows[0].count);

  const chainOf = async (taskId: string): Promise<Json> =>
    (await db.query(`SELECT "parent_task_id", "root_task_id", "depth" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId])).rows[0] as Json;

  const auditRows = async (sender: RegisteredTestAgent): Promise<Json[]> => {
    const response = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    return (response.body.items as Json[]).filter((row) => row.action === 'handoff.refuse' && row.actor === `agent:${sender.agent.handle}`);
  };

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_PAIR_HANDOFFS_PER_MINUTE: String(PAIR_PER_MINUTE), RELAY_CHAIN_BUDGET: String(BUDGET) } });
    org = `chains${randomUUID().slice(0, 6)}`;
    db = new PgClient({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('links A → B → C by referenceTaskIds through the official SDK client, and reads root, parent and depth back', async () => {
    const [alice, bob, carol] = [await agent('alice'), await agent('bob'), await agent('carol')];
    const aliceToBob: Client = await senderClient(relay, alice, bob.agent.handle);
    const root = (await aliceToBob.sendMessage({
      tenant: '',
      message: userMessage('check the release'),
      configuration: nonBlocking,
      metadata: undefined,
    })) as Task;
    const bobToCarol: Client = await senderClient(relay, bob, carol.agent.handle);
    const asked: Message = { ...userMessage('check the changelog for it'), referenceTaskIds: [root.id] };
    const child = (await bobToCarol.sendMessage({ tenant: '', message: asked, configuration: nonBlocking, metadata: undefined })) as Task;

    expect((root.metadata as Json).relay.chain).toEqual({ parentTaskId: null, rootTaskId: root.id, depth: 0 });
    const read = await bobToCarol.getTask({ tenant: '', id: child.id, historyLength: 0 });
    expect((read.metadata as Json).relay.chain).toEqual({ parentTaskId: root.id, rootTaskId: root.id, depth: 1 });
    expect(await chainOf(child.id)).toEqual({ parent_task_id: root.id, root_task_id: root.id, depth: 1 });

    // The AgentRelay dialect names the parent as parent_task_id, and its reads carry the chain.
    const dave = await agent('dave');
    const sent = await ok(relay.url, carol.api_key, 'message/send', {
      recipient: dave.agent.handle,
      parent_task_id: child.id,
      message: { role: 'user', parts: [{ type: 'text', text: 'run the tests for it' }] },
    });
    expect(sent.chain).toEqual({ parent_task_id: child.id, root_task_id: root.id, depth: 2 });
    const got = await ok(relay.url, dave.api_key, 'tasks/get', { task_id: sent.task_id });
    expect(got.chain).toEqual({ parent_task_id: child.id, root_task_id: root.id, depth: 2 });
    // The admin API's task read says it too.
    const detail = await request(relay.url)
      .get(`/admin/tasks/${sent.task_id as string}`)
      .set(admin)
      .expect(200);
    expect(detail.body.task.chain).toEqual({ parent_task_id: child.id, root_task_id: root.id, depth: 2 });
  });

  it('refuses a parent the sender takes no part in as it refuses an unknown task, storing nothing', async () => {
    const [alice, bob, carol, erin] = [await agent('alice'), await agent('bob'), await agent('carol'), await agent('erin')];
    const theirs = await handOff(alice, bob);
    const before = await tasksFrom(carol);
    const stored = await storedRows();
    const foreign = await sendV03(carol, erin, 'for a task that is not mine', [theirs]);
    const unknown = await sendV03(carol, erin, 'for a task that does not exist', ['01HXYZ4K2VNJQP7R8MWDB3CSTF']);
    expect(foreign.body.error).toEqual(unknown.body.error);
    expect(foreign.body.error).toMatchObject({ code: -32001, message: 'Task not found' });
    const relayDialect = await rpc(relay.url, carol.api_key, 'message/send', {
      recipient: erin.agent.handle,
      parent_task_id: theirs,
      message: { role: 'user', parts: [{ type: 'text', text: 'for a task that is not mine' }] },
    });
    expect(relayDialect.body.error).toMatchObject({ code: -32006, data: { reason: 'thread_not_found', field: 'parent_task_id' } });
    expect(await tasksFrom(carol)).toBe(before);
    expect(await storedRows()).toEqual(stored);
  });

  it('refuses the loop A → B → A at the second A with chain_cycle, storing nothing, and audits it', async () => {
    const [alice, bob] = [await agent('loop-a'), await agent('loop-b')];
    const first = await handOff(alice, bob);
    const before = await tasksFrom(bob);
    const stored = await storedRows();
    const loop = await sendV03(bob, alice, 'can you check it again?', [first]);
    expect(loop.status).toBe(200);
    expect(loop.body.error).toMatchObject({
      code: -32041,
      data: { reason: 'chain_cycle', limit: 1, path: [alice.agent.handle, bob.agent.handle, alice.agent.handle], parent_task_id: first, root_task_id: first },
    });
    expect(await tasksFrom(bob)).toBe(before);
    expect(await auditRows(bob)).toEqual([
      expect.objectContaining({
        target: alice.agent.handle,
        detail: expect.objectContaining({ reason: 'chain_cycle', path: [alice.agent.handle, bob.agent.handle, alice.agent.handle], root_task_id: first }),
      }),
    ]);
    // The HTTP+JSON binding answers 409 with the same reason.
    const rest = await request(relay.url)
      .post(`/a2a/${alice.agent.handle}/message:send`)
      .set('authorization', `Bearer ${bob.api_key}`)
      .set('a2a-version', '1.0')
      .send({
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'again?' }], referenceTaskIds: [first] },
        configuration: { returnImmediately: true },
      });
    expect(rest.status).toBe(409);
    expect(rest.body.error.details[0].metadata).toMatchObject({ relay_reason: 'chain_cycle', limit: '1' });
    expect(await tasksFrom(bob)).toBe(before);
    expect(await storedRows()).toEqual(stored);
  });

  it('refuses depth 9 under the default maximum of 8', async () => {
    const line = [];
    for (let index = 0; index <= 10; index++) line.push(await agent(`deep${index}`));
    let parent = await handOff(line[0], line[1]);
    for (let depth = 1; depth <= 8; depth++) parent = await handOff(line[depth], line[depth + 1], [parent]);
    expect(await chainOf(parent)).toMatchObject({ depth: 8 });
    const before = await tasksFrom(line[9]);
    const stored = await storedRows();
    const tooDeep = await sendV03(line[9], line[10], 'and one more', [parent]);
    expect(tooDeep.body.error).toMatchObject({ code: -32040, data: { reason: 'chain_depth_exceeded', limit: 8, limit_name: 'max_depth' } });
    expect((tooDeep.body.error?.data as Json).path).toEqual(line.map((entry) => entry.agent.handle));
    expect(await tasksFrom(line[9])).toBe(before);
    expect(await storedRows()).toEqual(stored);
  });

  it("refuses a handoff once its chain's tree holds the budget", async () => {
    const [lead, helper] = [await agent('budget-lead'), await agent('budget-helper')];
    const root = await handOff(lead, helper);
    // The helper asks others for the root, one each: the tree grows to the budget.
    const recipients = [];
    for (let index = 0; index < BUDGET; index++) recipients.push(await agent(`budget-peer${index}`));
    for (let index = 0; index < BUDGET - 1; index++) await handOff(helper, recipients[index], [root]);
    const before = await tasksFrom(helper);
    const stored = await storedRows();
    const over = await sendV03(helper, recipients[BUDGET - 1], 'one more', [root]);
    expect(over.body.error).toMatchObject({ code: -32042, data: { reason: 'chain_budget_exhausted', limit: BUDGET, limit_name: 'budget' } });
    expect(await tasksFrom(helper)).toBe(before);
    expect(await storedRows()).toEqual(stored);
    expect(Number((await db.query(`SELECT count(*) FROM "tasks"."tasks" WHERE "root_task_id" = $1 OR "id" = $1`, [root])).rows[0].count)).toBe(BUDGET);
  });

  it("stops an unlinked two-agent echo storm by the pair rate, storing nothing it refuses, while another pair's handoffs take at most twice their time alone (floor 1 s)", async () => {
    const [ping, pong, quiet] = [await agent('echo-ping'), await agent('echo-pong'), await agent('echo-quiet')];
    // The quiet agent's handoffs, each timed alone: never more than the pair rate to one peer.
    let quietSent = 0;
    const quietHandOff = async (): Promise<number> => {
      const peer = await agent(`echo-peer${Math.floor(quietSent++ / PAIR_PER_MINUTE)}`);
      const started = performance.now();
      await handOff(quiet, peer);
      return performance.now() - started;
    };
    const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
    for (let warmUp = 0; warmUp < 2; warmUp++) await quietHandOff();
    const alone: number[] = [];
    for (let sample = 0; sample < 9; sample++) alone.push(await quietHandOff());

    // The storm: each agent answers the other with a new handoff as soon as its last one was answered, linking nothing.
    const storm = { running: true, created: 0, refused: { [ping.agent.handle]: 0, [pong.agent.handle]: 0 } as Record<string, number>, other: [] as Json[] };
    const echo = async (from: RegisteredTestAgent, to: RegisteredTestAgent): Promise<void> => {
      while (storm.running) {
        const response = await sendV03(from, to, 'did you see my last message?');
        if (!response.body.error) storm.created++;
        else if (response.status === 429 && (response.body.error.data as Json)?.reason === 'pair_rate_limited') storm.refused[from.agent.handle]++;
        else storm.other.push(response.body.error as Json);
      }
    };
    const stormStarted = performance.now();
    const echoes = Promise.all([echo(ping, pong), echo(pong, ping)]);
    const beside: number[] = [];
    try {
      // Timed while the storm runs, until it has been refused a few times each way (and at most 60 handoffs).
      while (beside.length < 9 || (Object.values(storm.refused).some((count) => count < 3) && beside.length < 60)) beside.push(await quietHandOff());
    } finally {
      storm.running = false;
      await echoes;
    }
    const stormMinutes = Math.floor((performance.now() - stormStarted) / 60_000);

    expect(storm.other).toEqual([]);
    expect(Object.values(storm.refused).every((count) => count >= 3)).toBe(true);
    // Each way the pair rate lets through its limit a minute (a storm slower than a minute: one more minute's worth).
    const pairCount = async (from: RegisteredTestAgent, to: RegisteredTestAgent): Promise<number> =>
      Number(
        (await db.query(`SELECT count(*) FROM "tasks"."tasks" WHERE "sender_id" = $1 AND "recipient_id" = $2`, [from.agent.id, to.agent.id])).rows[0].count,
      );
    expect(storm.created).toBe((await pairCount(ping, pong)) + (await pairCount(pong, ping)));
    expect(await pairCount(ping, pong)).toBeLessThanOrEqual(PAIR_PER_MINUTE * (1 + stormMinutes));
    expect(await pairCount(pong, ping)).toBeLessThanOrEqual(PAIR_PER_MINUTE * (1 + stormMinutes));
    expect(median(beside)).toBeLessThanOrEqual(Math.max(2 * median(alone), 1000));

    // A refusal of the storm, read closely: the pair rate's error, Retry-After, nothing stored.
    const before = await tasksFrom(ping);
    const stored = await storedRows();
    const stopped = await sendV03(ping, pong, 'did you see my last message?');
    expect(stopped.status).toBe(429);
    expect(stopped.body.error).toMatchObject({
      code: -32043,
      data: { reason: 'pair_rate_limited', limit: PAIR_PER_MINUTE, limit_name: 'pair_per_minute', path: [ping.agent.handle, pong.agent.handle] },
    });
    const retryAfter = Number(stopped.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await sendV03(pong, ping, 'and back')).body.error).toMatchObject({ data: { reason: 'pair_rate_limited' } });
    expect(await tasksFrom(ping)).toBe(before);
    expect(await storedRows()).toEqual(stored);
    // Another pair is not held back.
    await handOff(ping, quiet);
  }, 180_000);

  it('links handoffs an agent makes with the CLI (--for) and the MCP send tool (for_task), and refuses their loop', async () => {
    const [lead, coder, tester] = [await agent('tool-lead'), await agent('tool-coder'), await agent('tool-tester')];
    const root = await handOff(lead, coder);
    let stdout = '';
    let stderr = '';
    const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
    const code = await run(
      ['send', tester.agent.handle, 'Run the suite for this change', '--for', root, '--json'],
      { RELAY_URL: relay.url, AGENTRELAY_API_KEY: coder.api_key },
      io,
    );
    expect({ code, stderr }).toEqual({ code: EXIT.ok, stderr: '' });
    const viaCli = JSON.parse(stdout) as Json;
    expect(viaCli.chain).toEqual({ parent_task_id: root, root_task_id: root, depth: 1 });

    const mcp = await McpAgent.start(relay.url, tester.api_key);
    try {
      const stored = await storedRows();
      const loop = await mcp.call('send_handoff', { recipient: coder.agent.handle, message: 'Can you check my check?', for_task: viaCli.task_id });
      expect(loop.isError).toBe(true);
      expect(textOf(loop)).toMatch(/chain_cycle/);
      expect(await storedRows()).toEqual(stored);
      const onward = await mcp.ok<{ chain: Json }>('send_handoff', {
        recipient: (await agent('tool-reviewer')).agent.handle,
        message: 'Review the results',
        for_task: viaCli.task_id,
      });
      expect(onward.data.chain).toEqual({ parent_task_id: viaCli.task_id, root_task_id: root, depth: 2 });
    } finally {
      await mcp.close();
    }
  }, 120_000);

  it("applies the recipient's trust policy's own bounds in place of the relay's: a lower depth, a loop both sides want", async () => {
    const [lead, reviewer, strict] = [await agent('policy-lead'), await agent('policy-reviewer'), await agent('policy-strict')];
    const trust = (handle: string, chain: Json) => request(relay.url).put(`/admin/agents/${handle}/trust`).set(admin).send({ chain });
    expect((await trust(strict.agent.handle, { max_depth: -1 })).status).toBe(400);
    const policy = await trust(strict.agent.handle, { max_depth: 1 }).expect(200);
    expect(policy.body.chain).toEqual({ max_depth: 1 });
    await trust(lead.agent.handle, { cycle_allowed_pairs: [`${lead.agent.handle}:${reviewer.agent.handle}`] }).expect(200);

    const root = await handOff(lead, reviewer);
    // The reviewer hands the work back to the lead for a second look: the lead's policy allows that loop.
    const back = await handOff(reviewer, lead, [root]);
    expect(await chainOf(back)).toMatchObject({ depth: 1 });
    // The strict agent takes nothing deeper than 1, though the relay's maximum is 8.
    const before = await tasksFrom(lead);
    const stored = await storedRows();
    const deep = await sendV03(lead, strict, 'one level too deep for you', [back]);
    expect(deep.body.error).toMatchObject({ code: -32040, data: { reason: 'chain_depth_exceeded', limit: 1 } });
    expect(await tasksFrom(lead)).toBe(before);
    expect(await storedRows()).toEqual(stored);
    await handOff(reviewer, strict, [root]);
  });

  it("applies the recipient's org's bounds over the relay's and under the recipient's trust policy's", async () => {
    const suffix = randomUUID().slice(0, 6);
    const [shallow, roomy] = [`shallow${suffix}`, `roomy${suffix}`];
    const bad = await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: shallow, chain: { max_depth: -1 } })
      .expect(400);
    expect(bad.body.error.reason).toBe('invalid_params');
    await request(relay.url).get(`/admin/orgs/${shallow}`).set(admin).expect(404);
    const created = await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: shallow, chain: { max_depth: 1 } })
      .expect(201);
    expect(created.body.chain).toEqual({ max_depth: 1 });
    const inOrg = (name: string, inside: string) => registerAgent(relay, { handle: `${name}@${inside}`, name });
    const [a1, a2, a3, a4, a5] = await Promise.all(['a1', 'a2', 'a3', 'a4', 'a5'].map((name) => inOrg(name, shallow)));
    const [b1, b2, b3, b4] = await Promise.all(['b1', 'b2', 'b3', 'b4'].map((name) => inOrg(name, roomy)));
    expect((await request(relay.url).get(`/admin/orgs/${roomy}`).set(admin).expect(200)).body.chain).toEqual({});

    // The shallow org's agents take nothing deeper than 1, though the relay's maximum is 8.
    const rootA = await handOff(a1, a2);
    const childA = await handOff(a2, a3, [rootA]);
    const before = await tasksFrom(a3);
    const stored = await storedRows();
    const deep = await sendV03(a3, a4, 'one level too deep for your org', [childA]);
    expect(deep.body.error).toMatchObject({ code: -32040, data: { reason: 'chain_depth_exceeded', limit: 1, limit_name: 'max_depth' } });
    expect((deep.body.error?.data as Json).path).toEqual([a1, a2, a3, a4].map((entry) => entry.agent.handle));
    expect(await tasksFrom(a3)).toBe(before);
    expect(await storedRows()).toEqual(stored);

    // Another org's agents keep the relay's default.
    const rootB = await handOff(b1, b2);
    const childB = await handOff(b2, b3, [rootB]);
    expect(await chainOf(await handOff(b3, b4, [childB]))).toMatchObject({ depth: 2 });

    // A recipient's own policy outranks its org: a5 takes depth 2, a4 still does not.
    await request(relay.url)
      .put(`/admin/agents/${a5.agent.handle}/trust`)
      .set(admin)
      .send({ chain: { max_depth: 3 } })
      .expect(200);
    expect(await chainOf(await handOff(a3, a5, [childA]))).toMatchObject({ depth: 2 });
    expect((await sendV03(a3, a4, 'still too deep', [childA])).body.error).toMatchObject({ data: { reason: 'chain_depth_exceeded', limit: 1 } });

    // Cleared, the org's agents fall back to the relay's bounds.
    const cleared = await request(relay.url).patch(`/admin/orgs/${shallow}`).set(admin).send({ chain: null }).expect(200);
    expect(cleared.body.chain).toEqual({});
    await eventually(async () => {
      const response = await sendV03(a3, a4, 'deep enough now', [childA]);
      expect(response.body.error).toBeUndefined();
    });
  });

  it('holds a handoff a hold rule names by its depth, for a person to decide', async () => {
    const [first, second, third, reviewer] = [await agent('hold-a'), await agent('hold-b'), await agent('hold-c'), await agent('hold-d')];
    await request(relay.url)
      .put(`/admin/agents/${reviewer.agent.handle}/trust`)
      .set(admin)
      .send({ hold: [{ name: 'deep chains', min_depth: 2 }] })
      .expect(200);
    const root = await handOff(first, second);
    const direct = await handOff(first, reviewer);
    const child = await handOff(second, third, [root]);
    const deep = await sendV03(third, reviewer, 'please approve', [child]);
    const held = deep.body.result as Json;
    expect(held.status.state).toBe('auth-required');
    expect(held.metadata.relay.chain).toEqual({ parentTaskId: child, rootTaskId: root, depth: 2 });
    expect((await db.query(`SELECT "state", "hold"->>'rule' AS "rule" FROM "tasks"."tasks" WHERE "id" = $1`, [held.id])).rows[0]).toEqual({
      state: 'held',
      rule: 'deep chains',
    });
    // A root to the same recipient is delivered at once.
    expect((await db.query(`SELECT "state" FROM "tasks"."tasks" WHERE "id" = $1`, [direct])).rows[0].state).toBe('pending');
  });

  it("counts every refusal by reason in the edge's metrics, one for each audit row", async () => {
    const response = await fetch(`${relay.edge.get(MetricsServer).url}/metrics`);
    const family = parsePrometheusText(await response.text()).get('agentrelay_chain_refusals_total');
    expect(family?.type).toBe('counter');
    const counted = Object.fromEntries((family?.samples ?? []).map((sample) => [sample.labels.reason, sample.value]));
    const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    const audited: Record<string, number> = { chain_depth_exceeded: 0, chain_cycle: 0, chain_budget_exhausted: 0, pair_rate_limited: 0 };
    for (const row of audit.body.items as Json[]) if (row.action === 'handoff.refuse') audited[row.detail.reason as string] += 1;
    // The tests above refused each kind at least once.
    for (const reason of Object.keys(audited)) expect(audited[reason]).toBeGreaterThan(0);
    expect(counted).toEqual(audited);
  });
});
