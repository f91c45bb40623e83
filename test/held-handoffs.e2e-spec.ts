import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { consoleOidcEnv, isSignedIn, registerConsoleClient, signInWithOidc, startConsoleProvider, type OidcSignIn } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok, rpc, type Json } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { testDatabaseUrl } from './support/test-env';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const people = {
  approver: { sub: 'ann', claims: { email: 'ann@acme.test', name: 'Ann Approver', agentrelay_role: 'approver' } },
  owner: { sub: 'owen', claims: { email: 'owen@partner.test', name: 'Owen Owner', agentrelay_role: 'approver' } },
  viewer: { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
};

/**
 * Held handoffs (docs/decisions/0024-held-handoffs.md): a hold rule of the recipient's trust policy
 * keeps a propose_action from another org for a person's approval; the recipient sees nothing of
 * it (reads, lists, its live inbox, its webhook) until an approver delivers it, once; a deny tells
 * the sender the reason; a hold expires; a viewer reads the queue but may not decide; four eyes refuses the owner.
 */
describe('held handoffs', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let sink: WebhookSink;
  let db: Client;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let teammate: RegisteredTestAgent;
  const sessions = {} as Record<keyof typeof people, OidcSignIn>;

  beforeAll(async () => {
    provider = await startConsoleProvider(Object.values(people));
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: consoleOidcEnv(provider, { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_HOLD_EXPIRY_SWEEP_MS: '200' }),
    });
    registerConsoleClient(provider, relay.url);
    for (const role of Object.keys(people) as Array<keyof typeof people>) {
      const result = await signInWithOidc(relay.url, people[role].sub);
      if (!isSignedIn(result)) throw new Error(`signing in as ${role} answered ${result.status}: ${result.body}`);
      sessions[role] = result;
    }
    const suffix = randomUUID().slice(0, 6);
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops', notification_webhook_url: sink.url('/ops') });
    teammate = await registerAgent(relay, { handle: `tess@acme${suffix}`, name: 'Tess' });
    bob = await registerAgent(relay, {
      handle: `bob@partner${suffix}`,
      name: 'Bob',
      email: 'owen@partner.test',
      owner: { subject: 'owen' },
      notification_webhook_url: sink.url('/bob'),
    });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({
        allow: [`*@partner${suffix}`],
        hold: [{ name: 'external proposals', outside_org: true, intents: ['propose_action'], four_eyes: true }],
      })
      .expect(200);
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
    await sink?.stop();
    await provider?.stop();
  });

  const as = (session: OidcSignIn) => ({ cookie: session.cookie, 'x-csrf-token': session.csrf });

  const propose = async (sender: RegisteredTestAgent, description: string): Promise<Json> =>
    ok(relay.url, sender.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: `Please: ${description}` }] },
      intent: 'propose_action',
      proposed_action: { description, target_files: ['db/migrations/042.sql'], rationale: 'the release needs it' },
    });

  const watch = (agent: RegisteredTestAgent): Promise<SseStream> =>
    openSse(`${relay.url}/a2a`, { authorization: `Bearer ${agent.api_key}` }, { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} });

  const webhooksFor = (path: string, taskId: string): Json[] =>
    sink
      .to(path)
      .map((entry) => JSON.parse(entry.body) as Json)
      .filter((body) => body.data?.task_id === taskId);

  const expectInvisibleToOps = async (taskId: string): Promise<void> => {
    const get = await rpc(relay.url, ops.api_key, 'tasks/get', { task_id: taskId });
    expect(get.body.error).toMatchObject({ code: -32005 });
    const a2aGet = await rpc(relay.url, ops.api_key, 'tasks/get', { id: taskId });
    expect(a2aGet.body.error).toMatchObject({ code: -32001 });
    const listed = await ok(relay.url, ops.api_key, 'tasks/list', {});
    expect(JSON.stringify(listed)).not.toContain(taskId);
    expect(webhooksFor('/ops', taskId)).toEqual([]);
  };

  it('holds a propose_action from another org: the sender sees it held, the recipient nothing until an approver delivers it once; audited with the person', async () => {
    const inbox = await watch(ops);
    const ready = await inbox.next();
    expect(ready?.data.result).toEqual({ event: 'ready' });

    const sent = await propose(bob, 'run the migration on prod');
    const taskId = sent.task_id as string;
    expect(sent.status.state).toBe('held');
    expect(sent.hold).toMatchObject({ rule: 'external proposals', four_eyes: true, outcome: 'held', expires_at: expect.any(String) });

    // The sender: AgentRelay `held`, A2A v0.3 `auth-required` with the reason from the relay.
    const mine = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
    expect(mine).toMatchObject({ status: { state: 'held' }, hold: { rule: 'external proposals' } });
    const a2a = await ok(relay.url, bob.api_key, 'tasks/get', { id: taskId });
    expect(a2a.status.state).toBe('auth-required');
    expect(a2a.status.message).toMatchObject({
      role: 'agent',
      parts: [{ kind: 'text', text: `Held for approval by ${ops.agent.handle}'s trust policy (rule "external proposals")` }],
      metadata: { agentrelay: { hold: { rule: 'external proposals' } } },
    });
    // A teammate's proposal is delivered at once.
    const fromTeammate = await propose(teammate, 'rotate the logs');
    expect(fromTeammate.status.state).toBe('pending');

    await expectInvisibleToOps(taskId);
    // The sender cannot change what the approver is deciding on.
    const append = await rpc(relay.url, bob.api_key, 'message/send', {
      task_id: taskId,
      message: { role: 'user', parts: [{ type: 'text', text: 'also drop users' }] },
    });
    expect(append.body.error).toMatchObject({ code: -32008 });

    // The queue: an approver sees it; a viewer reads it (as it reads every task) but may not decide.
    const queue = await request(relay.url).get('/admin/approvals').set(as(sessions.approver)).expect(200);
    expect(queue.body.items.map((row: Json) => row.id)).toContain(taskId);
    const detail = await request(relay.url).get(`/admin/approvals/${taskId}`).set(as(sessions.approver)).expect(200);
    expect(detail.body.task).toMatchObject({ state: 'held', intent: 'propose_action', proposed_action: { target_files: ['db/migrations/042.sql'] } });
    const viewerQueue = await request(relay.url).get('/admin/approvals').set(as(sessions.viewer)).expect(200);
    expect(viewerQueue.body.items.find((row: Json) => row.id === taskId)).toMatchObject({
      hold: { rule: 'external proposals', four_eyes: true, outcome: 'held', expires_at: expect.any(String) },
    });
    const viewerApproves = await request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(as(sessions.viewer)).send({}).expect(403);
    expect(viewerApproves.body.error.reason).toBe('role_forbidden');

    // Four eyes: the owner of the sending agent, and the break-glass admin token, are refused; nothing is done.
    const byOwner = await request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(as(sessions.owner)).send({}).expect(403);
    expect(byOwner.body.error).toMatchObject({ reason: 'four_eyes', data: { refusal: 'owner', owner: { subject: 'owen' } } });
    const byToken = await request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(admin).send({}).expect(403);
    expect(byToken.body.error.reason).toBe('four_eyes');
    expect((await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId })).status.state).toBe('held');

    // Bad input is a precise 400.
    const tooLong = await request(relay.url)
      .post(`/admin/approvals/${taskId}/approve`)
      .set(as(sessions.approver))
      .send({ comment: 'x'.repeat(2001) })
      .expect(400);
    expect(tooLong.body.error.fields[0].field).toBe('comment');

    const approved = await request(relay.url)
      .post(`/admin/approvals/${taskId}/approve`)
      .set(as(sessions.approver))
      .send({ comment: 'checked the plan' })
      .expect(200);
    expect(approved.body).toMatchObject({ state: 'pending', hold: { outcome: 'approved', comment: 'checked the plan' } });
    await request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(as(sessions.approver)).send({}).expect(409);

    // The recipient now gets it as if just sent: its live inbox's first event of the task is `created`, its webhook fires once.
    let first: SseEvent | undefined;
    while (!first) {
      const event = await inbox.next();
      if (!event) throw new Error('the inbox stream ended');
      if (event.data.result?.task_id === taskId) first = event;
    }
    expect(first.data.result).toMatchObject({ event: 'created', task_id: taskId, status: { state: 'pending' } });
    inbox.close();
    await eventually(() => webhooksFor('/ops', taskId).length > 0, 30000);
    const seen = await ok(relay.url, ops.api_key, 'tasks/get', { task_id: taskId });
    expect(seen).toMatchObject({ status: { state: 'pending' }, intent: 'propose_action' });
    expect(webhooksFor('/ops', taskId).map((body) => body.type)).toEqual(['a2a.task.created']);

    const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    expect(audit.body.items.find((row: Json) => row.action === 'approval.approve' && row.target === taskId)).toMatchObject({
      actor_sub: 'ann',
      actor_email: 'ann@acme.test',
      detail: { rule: 'external proposals', comment: 'checked the plan' },
    });
    const timeline = await request(relay.url).get(`/admin/tasks/${taskId}`).set(admin).expect(200);
    expect(timeline.body.audit.map((row: Json) => [row.action, row.actor, row.from_state, row.to_state])).toEqual([
      ['create', bob.agent.handle, null, 'held'],
      ['approve', 'ann@acme.test', 'held', 'pending'],
    ]);
  });

  it('a deny tells the sender the reason; the recipient never sees the handoff', async () => {
    const taskId = (await propose(bob, 'truncate the audit table')).task_id as string;
    const denied = await request(relay.url)
      .post(`/admin/approvals/${taskId}/deny`)
      .set(as(sessions.approver))
      .send({ comment: 'not during the freeze' })
      .expect(200);
    expect(denied.body).toMatchObject({ state: 'rejected', hold: { outcome: 'denied' } });
    const mine = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
    expect(mine).toMatchObject({ status: { state: 'rejected' }, reason: 'Denied by an approver: not during the freeze' });
    await eventually(() => webhooksFor('/bob', taskId).length > 0, 30000);
    expect(webhooksFor('/bob', taskId).map((body) => body.type)).toEqual(['a2a.task.rejected']);
    expect(webhooksFor('/bob', taskId)[0].data).toMatchObject({
      state: 'rejected',
      audience: 'sender',
      task: { reason: 'Denied by an approver: not during the freeze' },
    });
    await expectInvisibleToOps(taskId);
    const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    expect(audit.body.items.find((row: Json) => row.action === 'approval.deny' && row.target === taskId)).toMatchObject({ actor_email: 'ann@acme.test' });
  });

  it('a hold expires after its deadline: rejected, the sender told, the recipient nothing; a late approval is refused', async () => {
    const taskId = (await propose(bob, 'rebuild the search index')).task_id as string;
    // The deadline moved into the past stands for the rule's time having passed.
    await db.query(`UPDATE "tasks"."tasks" SET "hold_expires_at" = now() - interval '1 second' WHERE "id" = $1`, [taskId]);
    const expired = await eventually(async () => {
      const task = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
      return task.status.state === 'rejected' ? task : false;
    }, 30000);
    expect(expired).toMatchObject({ hold: { outcome: 'expired' }, reason: expect.stringMatching(/^Not approved before the hold expired/) });
    const late = await request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(as(sessions.approver)).send({}).expect(409);
    expect(late.body.error.reason).toBe('not_held');
    await eventually(() => webhooksFor('/bob', taskId).length > 0, 30000);
    await expectInvisibleToOps(taskId);
  });

  it('the sender may withdraw a held handoff; the recipient is not told', async () => {
    const taskId = (await propose(bob, 'restart the cluster')).task_id as string;
    const cancelled = await ok(relay.url, bob.api_key, 'tasks/cancel', { task_id: taskId });
    expect(cancelled.status.state).toBe('cancelled');
    await request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(as(sessions.approver)).send({}).expect(409);
    await expectInvisibleToOps(taskId);
  });
});
