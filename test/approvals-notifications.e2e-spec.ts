import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { DELIVERY_ASSERTION_JWKS_PATH, DELIVERY_ASSERTION_TYPE, type DeliveryView } from '@app/contracts';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, type Json } from './support/json-rpc';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const APPROVERS_SECRET = `whsec_${Buffer.from(randomUUID() + randomUUID()).toString('base64')}`;
const PUBLIC_URL = 'https://relay.acme.test';

/**
 * The approvers are told of each held handoff (docs/operations.md#approvals): the notifier posts
 * the `held` task event to the operator's approvers webhook (signed) and Slack, each with the link
 * to the held handoff's console page; the agents' own channels hear nothing of it; a handoff
 * delivered at once, and the approval itself, tell the approvers nothing.
 */
describe('approvers notifications', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let teammate: RegisteredTestAgent;
  const suffix = randomUUID().slice(0, 6);

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_PUBLIC_URL: PUBLIC_URL,
        RELAY_APPROVALS_WEBHOOK_URL: sink.url('/approvers'),
        RELAY_APPROVALS_WEBHOOK_SECRET: APPROVERS_SECRET,
        RELAY_APPROVALS_SLACK_WEBHOOK_URL: sink.url('/approvers-slack'),
        RELAY_SLACK_MIN_INTERVAL_MS: '0',
      },
    });
    ops = await registerAgent(relay, {
      handle: `ops@acme${suffix}`,
      name: 'Ops',
      notification_webhook_url: sink.url('/ops'),
      slack_webhook_url: sink.url('/ops-slack'),
    });
    bob = await registerAgent(relay, { handle: `bob@partner${suffix}`, name: 'Bob', notification_webhook_url: sink.url('/bob') });
    teammate = await registerAgent(relay, { handle: `tess@acme${suffix}`, name: 'Tess' });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({
        allow: [`*@partner${suffix}`],
        hold: [{ name: 'external proposals', outside_org: true, intents: ['propose_action'], four_eyes: true }],
        tool_prompts: [{ name: 'outside senders', outside_org: true }],
      })
      .expect(200);
  });

  afterAll(async () => {
    await relay?.stop();
    await sink?.stop();
  });

  const propose = async (sender: RegisteredTestAgent, description: string): Promise<Json> =>
    ok(relay.url, sender.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: `Please: ${description}` }] },
      intent: 'propose_action',
      proposed_action: { description, target_files: ['deploy/prod.yaml'], rationale: 'the release needs it' },
    });

  const requestsFor = (path: string, taskId: string): SinkRequest[] => sink.to(path).filter((entry) => entry.body.includes(taskId));

  it("posts a held handoff to the approvers' webhook and Slack with its console link; the agents hear nothing of it", async () => {
    const sent = await propose(bob, 'scale the prod database');
    const taskId = sent.task_id as string;
    expect(sent.status.state).toBe('held');
    const approvalUrl = `${PUBLIC_URL}/console/approvals/${taskId}`;

    await eventually(() => requestsFor('/approvers', taskId).length > 0 && requestsFor('/approvers-slack', taskId).length > 0, 30000);
    const [hook] = requestsFor('/approvers', taskId);
    expect(verifyStandardWebhook(hook, APPROVERS_SECRET)).toBe(true);
    // Who asked, signed for the approvers (docs/chains.md#who-asked-signed).
    const assertion = await jwtVerify(hook.headers['x-agentrelay-assertion'] as string, createRemoteJWKSet(new URL(DELIVERY_ASSERTION_JWKS_PATH, relay.url)), {
      issuer: PUBLIC_URL,
      audience: 'approvers',
      typ: DELIVERY_ASSERTION_TYPE,
    });
    expect(assertion.payload).toMatchObject({ sub: bob.agent.handle, task_id: taskId, event: 'a2a.task.held', depth: 0, root_sender: bob.agent.handle });
    expect(JSON.parse(hook.body)).toMatchObject({
      type: 'a2a.task.held',
      approval_url: approvalUrl,
      data: {
        type: 'held',
        task_id: taskId,
        state: 'held',
        sender: bob.agent.handle,
        recipient: ops.agent.handle,
        audience: 'sender',
        hold: { rule: 'external proposals', four_eyes: true, expires_at: expect.any(String) },
        task: { intent: 'propose_action', summary: 'Please: scale the prod database' },
      },
    });
    const slack = JSON.parse(requestsFor('/approvers-slack', taskId)[0].body) as { text: string; blocks: Json[] };
    expect(slack.text).toContain(`Approval needed: ${bob.agent.handle} → ${ops.agent.handle}`);
    expect(slack.text).toContain(approvalUrl);
    expect(JSON.stringify(slack.blocks)).toContain(`<${approvalUrl}|Review it in the console>`);

    // The delivery log names the approvers as the target; the agents' channels carry nothing of the held handoff.
    const deliveries = await eventually(async () => {
      const listed = (await request(relay.url).get(`/admin/deliveries?task_id=${taskId}`).set(admin)).body.deliveries as DeliveryView[];
      return listed.filter((delivery) => delivery.status === 'succeeded').length === 2 ? listed : false;
    }, 30000);
    expect(deliveries.map((delivery) => delivery.channel).sort()).toEqual(['slack', 'webhook']);
    expect(deliveries.every((delivery) => delivery.target_handle === 'approvers' && delivery.event === 'a2a.task.held')).toBe(true);
    expect(requestsFor('/ops', taskId)).toEqual([]);
    expect(requestsFor('/ops-slack', taskId)).toEqual([]);
    expect(requestsFor('/bob', taskId)).toEqual([]);
  });

  it('a handoff delivered at once tells the approvers nothing; each held one is told once', async () => {
    const direct = (await propose(teammate, 'rotate the logs')).task_id as string;
    const held = (await propose(bob, 'restart the API')).task_id as string;
    await eventually(() => requestsFor('/approvers', held).length > 0 && requestsFor('/ops', direct).length > 0, 30000);
    expect(requestsFor('/approvers', direct)).toEqual([]);
    expect(requestsFor('/approvers-slack', direct)).toEqual([]);
    await eventually(() => requestsFor('/approvers-slack', held).length > 0, 30000);
    expect(requestsFor('/approvers', held)).toHaveLength(1);
    expect(requestsFor('/approvers-slack', held)).toHaveLength(1);
  });

  it("posts a coding agent's tool prompt that people answer to the approvers, with the approvals page's link", async () => {
    const asked = await ok(relay.url, bob.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'Please run the checks' }] },
    });
    const taskId = asked.task_id as string;
    // The worker takes the handoff before its coding agent runs, then asks.
    await ok(relay.url, ops.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    const request = {
      kind: 'permission_request',
      request_id: randomUUID(),
      tool_name: 'Bash',
      tool_input: { command: 'make check' },
      client: 'claude-code',
      hook_event: 'PreToolUse',
      expires_at: new Date(Date.now() + 600_000).toISOString(),
      answered_by: 'approvers',
    };
    await ok(relay.url, ops.api_key, 'message/send', {
      task_id: taskId,
      message: { parts: [{ type: 'text', text: 'Permission needed: Claude Code wants to use Bash' }], payload: { permission_request: request } },
    });
    await eventually(() => requestsFor('/approvers', taskId).length > 0 && requestsFor('/approvers-slack', taskId).length > 0, 30000);
    const [hook] = requestsFor('/approvers', taskId);
    expect(verifyStandardWebhook(hook, APPROVERS_SECRET)).toBe(true);
    expect(JSON.parse(hook.body)).toMatchObject({
      type: 'a2a.task.tool_prompt',
      approval_url: `${PUBLIC_URL}/console/approvals`,
      data: { type: 'message_appended', task_id: taskId, task: { latest_message: { from: ops.agent.handle, payload: { permission_request: request } } } },
    });
    expect(JSON.parse(requestsFor('/approvers-slack', taskId)[0].body).text).toContain(
      `${ops.agent.handle}'s coding agent wants to use Bash on a handoff from ${bob.agent.handle} (${PUBLIC_URL}/console/handoffs/${taskId})`,
    );
  });
});
