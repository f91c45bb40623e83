import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { consoleOidcEnv, isSignedIn, registerConsoleClient, signInWithOidc, startConsoleProvider, type OidcSignIn } from './support/console-oidc';
import { ok, type Json } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const people = {
  // The owner's account has no email claim at all.
  owner: { sub: 'owen', claims: { name: 'Owen Owner', agentrelay_role: 'admin' } },
  // Another account of the owner, whose email the provider verified.
  ownerAgain: { sub: 'owen-2', claims: { email: 'owen@partner.test', email_verified: true, name: 'Owen Again', agentrelay_role: 'approver' } },
  approver: { sub: 'ann', claims: { email: 'ann@acme.test', email_verified: true, name: 'Ann Approver', agentrelay_role: 'approver' } },
  // An admin whose provider verified her email.
  registrar: { sub: 'dora', claims: { email: 'dora@partner.test', email_verified: true, name: 'Dora', agentrelay_role: 'admin' } },
  // Someone else, whose email claim (not verified) is the one on record for the owner's agent.
  unverified: { sub: 'ursula', claims: { email: 'owen@partner.test', email_verified: false, name: 'Ursula', agentrelay_role: 'approver' } },
};

/**
 * Four eyes on a stable identity (docs/decisions/0024-held-handoffs.md): the owner of an agent is
 * on record by their account at the console's OpenID Provider (who registered it through the
 * console, or whom an admin names), or by a verified email; the owner is refused by their account
 * even with no email claim, an agent with no owner on record is decided by nobody, and an
 * unverified email proves nothing either way. Held handoffs and tool prompts alike.
 */
describe('four eyes on the owner’s account', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let suffix: string;
  const sessions = {} as Record<keyof typeof people, OidcSignIn>;

  const as = (session: OidcSignIn) => ({ cookie: session.cookie, 'x-csrf-token': session.csrf });

  beforeAll(async () => {
    provider = await startConsoleProvider(Object.values(people));
    relay = await RelayHarness.start({ env: consoleOidcEnv(provider) });
    registerConsoleClient(provider, relay.url);
    for (const key of Object.keys(people) as Array<keyof typeof people>) {
      const result = await signInWithOidc(relay.url, people[key].sub);
      if (!isSignedIn(result)) throw new Error(`signing in as ${key} answered ${result.status}: ${result.body}`);
      sessions[key] = result;
    }
    suffix = randomUUID().slice(0, 6);
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops' });
    // The owner registers bob through their own console sign-in: the agent is theirs.
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set(as(sessions.owner))
      .send({ handle: `bob@partner${suffix}`, name: 'Bob', email: 'owen@partner.test' })
      .expect(201);
    bob = registered.body as RegisteredTestAgent;
    // The admin token names nobody: carol has an email but no owner on record.
    carol = await registerAgent(relay, { handle: `carol@partner${suffix}`, name: 'Carol', email: 'carol@partner.test' });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({
        allow: [`*@partner${suffix}`],
        hold: [{ name: 'external proposals', outside_org: true, intents: ['propose_action'], four_eyes: true }],
        tool_prompts: [{ name: 'outside senders', outside_org: true, four_eyes: true }],
      })
      .expect(200);
  });

  afterAll(async () => {
    await relay?.stop();
    await provider?.stop();
  });

  const propose = async (sender: RegisteredTestAgent, description: string): Promise<string> => {
    const sent = await ok(relay.url, sender.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: `Please: ${description}` }] },
      intent: 'propose_action',
      proposed_action: { description, target_files: ['db/migrations/042.sql'], rationale: 'the release needs it' },
    });
    expect(sent.status.state).toBe('held');
    return sent.task_id as string;
  };

  /** A handoff whose tool prompts the approvers answer (not held: a plain request). */
  const askTools = async (sender: RegisteredTestAgent): Promise<string> => {
    const sent = await ok(relay.url, sender.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'Run the tests' }] },
    });
    expect(sent.status.state).toBe('pending');
    return sent.task_id as string;
  };

  const approve = (taskId: string, session: OidcSignIn) => request(relay.url).post(`/admin/approvals/${taskId}/approve`).set(as(session)).send({});
  const allowTool = (taskId: string, session: OidcSignIn) =>
    request(relay.url).post(`/admin/approvals/${taskId}/tool-prompts/req-1/allow`).set(as(session)).send({});
  const stateOf = async (sender: RegisteredTestAgent, taskId: string): Promise<string> =>
    ((await ok(relay.url, sender.api_key, 'tasks/get', { task_id: taskId })) as Json).status.state as string;

  it('records who registered an agent through the console as its owner, and refuses them without an email claim; another verified person decides', async () => {
    const record = await request(relay.url).get(`/admin/agents/${bob.agent.handle}`).set(admin).expect(200);
    expect(record.body).toMatchObject({ owner: { issuer: provider.issuer, subject: 'owen' }, email: 'owen@partner.test', email_verified: false });

    const taskId = await propose(bob, 'run the migration on prod');
    const byOwner = await approve(taskId, sessions.owner).expect(403);
    expect(byOwner.body.error).toMatchObject({
      reason: 'four_eyes',
      message: expect.stringContaining(`You own ${bob.agent.handle}`),
      data: { refusal: 'owner', owner: { issuer: provider.issuer, subject: 'owen' } },
    });
    expect(await stateOf(bob, taskId)).toBe('held');
    // The owner's tool prompts are refused to them the same way (before any prompt is looked up).
    const toolTask = await askTools(bob);
    const toolByOwner = await allowTool(toolTask, sessions.owner).expect(403);
    expect(toolByOwner.body.error).toMatchObject({ reason: 'four_eyes', data: { refusal: 'owner' } });

    const byApprover = await approve(taskId, sessions.approver).expect(200);
    expect(byApprover.body).toMatchObject({ state: 'pending', hold: { outcome: 'approved' } });
    // Past four eyes, the approver's answer reaches the tool prompt (there is none by that id).
    expect((await allowTool(toolTask, sessions.approver).expect(404)).body.error.reason).toBe('tool_prompt_not_found');
  });

  it('refuses everyone on an agent with no owner on record, saying how to record one; decided once an admin names the owner', async () => {
    const taskId = await propose(carol, 'drop the staging database');
    for (const session of [sessions.approver, sessions.unverified, sessions.owner]) {
      const refused = await approve(taskId, session).expect(403);
      expect(refused.body.error).toMatchObject({
        reason: 'four_eyes',
        message: expect.stringContaining(`${carol.agent.handle}, the sending agent, has no owner on record`),
        data: { refusal: 'no_owner', sender: carol.agent.handle },
      });
      expect(refused.body.error.message).toContain(`PATCH /admin/agents/${carol.agent.handle}`);
    }
    const toolTask = await askTools(carol);
    expect((await allowTool(toolTask, sessions.approver).expect(403)).body.error.data).toMatchObject({ refusal: 'no_owner' });
    expect(await stateOf(carol, taskId)).toBe('held');

    // Bad input is a precise 400 and changes nothing.
    const blank = await request(relay.url)
      .patch(`/admin/agents/${carol.agent.handle}`)
      .set(admin)
      .send({ owner: { subject: '' } })
      .expect(400);
    expect(blank.body.error.reason).toBe('invalid_params');
    expect(JSON.stringify(blank.body.error.fields)).toContain('subject');
    // The admin token records the owner explicitly (the issuer is the console's when not named).
    const named = await request(relay.url)
      .patch(`/admin/agents/${carol.agent.handle}`)
      .set(admin)
      .send({ owner: { subject: 'owen' } })
      .expect(200);
    expect(named.body).toMatchObject({ owner: { issuer: provider.issuer, subject: 'owen' }, email_verified: false });
    expect((await approve(taskId, sessions.owner).expect(403)).body.error.data).toMatchObject({ refusal: 'owner' });
    await approve(taskId, sessions.approver).expect(200);
  });

  it('counts an unverified email for nothing: it neither makes someone the owner nor hides the owner’s verified one', async () => {
    // Ursula's email claim is the address on record for bob's owner, unverified: she is another account, and decides.
    const first = await propose(bob, 'rotate the keys');
    const byUnverified = await approve(first, sessions.unverified).expect(200);
    expect(byUnverified.body).toMatchObject({ state: 'pending', hold: { outcome: 'approved' } });
    // The owner's other account proves, by a verified email, that it holds the owner's address: refused.
    const second = await propose(bob, 'rotate the keys again');
    const byOwnerAgain = await approve(second, sessions.ownerAgain).expect(403);
    expect(byOwnerAgain.body.error).toMatchObject({ reason: 'four_eyes', data: { refusal: 'owner' } });
    expect(await stateOf(bob, second)).toBe('held');
  });

  it('records an email as verified only when it is the registering owner’s own verified email, and no longer once the owner changes', async () => {
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set(as(sessions.registrar))
      .send({ handle: `dave@partner${suffix}`, name: 'Dave', email: 'Dora@Partner.test' })
      .expect(201);
    expect(registered.body.agent).toMatchObject({ owner: { subject: 'dora' }, email_verified: true });
    // Someone else's email typed at registration is not verified, whoever types it.
    const typed = await request(relay.url)
      .post('/admin/agents')
      .set(as(sessions.registrar))
      .send({ handle: `erin@partner${suffix}`, name: 'Erin', email: 'erin@partner.test' })
      .expect(201);
    expect(typed.body.agent).toMatchObject({ owner: { subject: 'dora' }, email_verified: false });
    const handedOver = await request(relay.url)
      .patch(`/admin/agents/dave@partner${suffix}`)
      .set(admin)
      .send({ owner: { subject: 'ann' } })
      .expect(200);
    expect(handedOver.body).toMatchObject({ owner: { subject: 'ann' }, email: 'Dora@Partner.test', email_verified: false });
  });
});
