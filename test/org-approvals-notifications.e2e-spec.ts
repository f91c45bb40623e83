import { randomBytes, randomUUID } from 'node:crypto';
import type { DeliveryView } from '@app/contracts';
import { Writable } from 'node:stream';
import pg from 'pg';
import request from 'supertest';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const DEADLINE_MS = 60_000;
const APPROVERS_SECRET = `whsec_${Buffer.from(randomUUID() + randomUUID()).toString('base64')}`;

/** A Slack incoming webhook's path: its random part is the credential. */
function slackPath(): string {
  return `/services/T${randomBytes(4).toString('hex')}/B${randomBytes(4).toString('hex')}/${randomBytes(12).toString('hex')}`;
}

/** Tables of the relay's schemas with a row whose text (every column, JSON included) contains the needle. */
async function tablesContaining(needle: string): Promise<string[]> {
  const db = new pg.Client({ connectionString: testDatabaseUrl() });
  await db.connect();
  try {
    const { rows: tables } = await db.query<{ schema: string; table: string }>(
      `SELECT table_schema AS "schema", table_name AS "table" FROM information_schema.tables
        WHERE table_schema IN ('tasks', 'notifier', 'directory') AND table_type = 'BASE TABLE'`,
    );
    const found: string[] = [];
    for (const { schema, table } of tables) {
      const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${schema}"."${table}" t WHERE strpos(t::text, $1) > 0`, [needle]);
      if (rows[0].n > 0) found.push(`${schema}.${table}`);
    }
    return found;
  } finally {
    await db.end();
  }
}

/**
 * Each org's approvers hear of what they decide in their own Slack channel
 * (docs/orgs.md#approvals-notifications): a handoff held by an org's rule (its recipient's) is
 * posted to that org's channel and to no other; an org without one goes to the relay's channel;
 * the admin API and the logs never show an org's URL.
 */
describe("org approvals notifications: each org's held handoffs in its own Slack channel", () => {
  let relay: RelayHarness;
  /** Stand-ins for Slack's incoming webhooks: one server per org, one for the relay. */
  let paySlack: WebhookSink;
  let webSlack: WebhookSink;
  let relaySlack: WebhookSink;
  const logs: string[] = [];
  const suffix = randomBytes(3).toString('hex');
  const pay = `pay-${suffix}`;
  const web = `web-${suffix}`;
  const plain = `plain-${suffix}`;
  const payPath = slackPath();
  const webPath = slackPath();
  let ana: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let otto: RegisteredTestAgent;
  let bea: RegisteredTestAgent;

  beforeAll(async () => {
    [paySlack, webSlack, relaySlack] = await Promise.all([WebhookSink.start(), WebhookSink.start(), WebhookSink.start()]);
    const logDestination = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        logs.push(chunk.toString());
        callback();
      },
    });
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_APPROVALS_SLACK_WEBHOOK_URL: relaySlack.url('/relay-approvers'),
        RELAY_SLACK_MIN_INTERVAL_MS: '0',
        LOG_LEVEL: 'debug',
      },
      logDestination,
    });
    await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: pay, notifications: { approvals_slack_url: paySlack.url(payPath) } })
      .expect(201);
    await request(relay.url).post('/admin/orgs').set(admin).send({ name: web }).expect(201);
    await request(relay.url)
      .patch(`/admin/orgs/${web}`)
      .set(admin)
      .send({ notifications: { approvals_slack_url: webSlack.url(webPath) } })
      .expect(200);
    ana = await registerAgent(relay, { handle: `ana@${pay}`, name: 'Ana' });
    frank = await registerAgent(relay, { handle: `frank@${web}`, name: 'Frank' });
    otto = await registerAgent(relay, { handle: `otto@${plain}`, name: 'Otto' });
    bea = await registerAgent(relay, { handle: `bea@${pay}`, name: 'Bea' });
    // Each agent takes handoffs from the others' orgs, held by a rule of its own org.
    for (const agent of [ana, frank, otto]) {
      await request(relay.url)
        .put(`/admin/agents/${agent.agent.handle}/trust`)
        .set(admin)
        .send({
          allow: [`*@${pay}`, `*@${web}`, `*@${plain}`],
          hold: [{ name: 'outsiders', outside_org: true }],
          tool_prompts: [{ name: 'outsiders', outside_org: true }],
        })
        .expect(200);
    }
  });

  afterAll(async () => {
    await relay?.stop();
    await Promise.all([paySlack?.stop(), webSlack?.stop(), relaySlack?.stop()]);
  });

  const send = async (sender: RegisteredTestAgent, recipient: RegisteredTestAgent, text: string): Promise<string> => {
    const sent = await ok(relay.url, sender.api_key, 'message/send', {
      recipient: recipient.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text }] },
    });
    expect((sent.status as Json).state).toBe('held');
    return sent.task_id as string;
  };

  const postsOf = (sink: WebhookSink, taskId: string): SinkRequest[] => sink.requests.filter((entry) => entry.body.includes(taskId));
  const allPosts = (taskId: string): Record<string, number> => ({
    pay: postsOf(paySlack, taskId).length,
    web: postsOf(webSlack, taskId).length,
    relay: postsOf(relaySlack, taskId).length,
  });

  /**
   * The Slack deliveries of a task's event once one was posted to `sink`. Every delivery of an event
   * is recorded at once, before any is sent: what the log lists then is all that will ever be posted.
   */
  const slackDeliveries = async (taskId: string, sink: WebhookSink, event = 'a2a.task.held'): Promise<DeliveryView[]> => {
    await eventually(() => postsOf(sink, taskId).length > 0, DEADLINE_MS);
    const listed = (await request(relay.url).get(`/admin/deliveries?task_id=${taskId}&limit=100`).set(admin).expect(200)).body.deliveries as DeliveryView[];
    return listed.filter((delivery) => delivery.channel === 'slack' && delivery.event === event);
  };
  const hostOf = (sink: WebhookSink): string => `http://127.0.0.1:${sink.port}`;

  it("posts a handoff held by an org's rule to that org's channel only, and never to the other org's or the relay's", async () => {
    const toPay = await send(frank, ana, 'Please review the payment limits');
    const toWeb = await send(ana, frank, 'Please update the checkout page');
    expect((await slackDeliveries(toPay, paySlack)).map((delivery) => delivery.target_host)).toEqual([hostOf(paySlack)]);
    expect((await slackDeliveries(toWeb, webSlack)).map((delivery) => delivery.target_host)).toEqual([hostOf(webSlack)]);
    expect(allPosts(toPay)).toEqual({ pay: 1, web: 0, relay: 0 });
    expect(allPosts(toWeb)).toEqual({ pay: 0, web: 1, relay: 0 });
    const [posted] = postsOf(paySlack, toPay);
    expect(posted.path).toBe(payPath);
    const message = JSON.parse(posted.body) as { text: string };
    expect(message.text).toContain(`Approval needed: ${frank.agent.handle} → ${ana.agent.handle}`);
    // Nothing of one org's handoff reaches the other org's channel, not even its summary.
    expect(webSlack.requests.some((entry) => entry.body.includes('payment limits'))).toBe(false);
    expect(paySlack.requests.some((entry) => entry.body.includes('checkout page'))).toBe(false);
  });

  it("posts a handoff held by the rule of an org without a channel to the relay's", async () => {
    const toPlain = await send(ana, otto, 'Please rotate the keys');
    expect((await slackDeliveries(toPlain, relaySlack)).map((delivery) => delivery.target_host)).toEqual([hostOf(relaySlack)]);
    expect(allPosts(toPlain)).toEqual({ pay: 0, web: 0, relay: 1 });
    expect(relaySlack.requests.find((entry) => entry.body.includes(toPlain))?.path).toBe('/relay-approvers');
  });

  it("posts a tool prompt that people answer to the channel of the recipient's org", async () => {
    // A teammate's handoff, delivered at once; the recipient's coding agent asks on it.
    const sent = await ok(relay.url, bea.api_key, 'message/send', {
      recipient: ana.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'Please run the checks' }] },
    });
    const taskId = sent.task_id as string;
    await ok(relay.url, ana.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    const prompt = {
      kind: 'permission_request',
      request_id: randomUUID(),
      tool_name: 'Bash',
      tool_input: { command: 'make check' },
      client: 'claude-code',
      hook_event: 'PreToolUse',
      expires_at: new Date(Date.now() + 600_000).toISOString(),
      answered_by: 'approvers',
    };
    await ok(relay.url, ana.api_key, 'message/send', {
      task_id: taskId,
      message: { parts: [{ type: 'text', text: 'Permission needed: Claude Code wants to use Bash' }], payload: { permission_request: prompt } },
    });
    expect((await slackDeliveries(taskId, paySlack, 'a2a.task.tool_prompt')).map((delivery) => delivery.target_host)).toEqual([hostOf(paySlack)]);
    expect(JSON.parse(postsOf(paySlack, taskId)[0].body).text).toContain(`${ana.agent.handle}'s coding agent wants to use Bash`);
    expect(allPosts(taskId)).toEqual({ pay: 1, web: 0, relay: 0 });
  });

  it('never returns, audits or logs the URL: an org shows whether it has a channel and its host', async () => {
    const shown = await request(relay.url).get(`/admin/orgs/${pay}`).set(admin).expect(200);
    expect(shown.body.notifications).toEqual({ approvals_slack_url: { configured: true, host: `127.0.0.1:${paySlack.port}` } });
    const listed = await request(relay.url).get('/admin/orgs?limit=200').set(admin).expect(200);
    const items = listed.body.items as Array<{ name: string; notifications?: unknown }>;
    expect(items.find((org) => org.name === web)?.notifications).toEqual({ approvals_slack_url: { configured: true, host: `127.0.0.1:${webSlack.port}` } });
    expect(items.find((org) => org.name === plain)?.notifications).toEqual({ approvals_slack_url: { configured: false, host: null } });
    const audit = await request(relay.url).get('/admin/audit?limit=100').set(admin).expect(200);
    const changes = (audit.body.items as Array<{ action: string; target: string | null; detail: Record<string, unknown> | null }>).filter(
      (row) => row.detail?.notifications !== undefined,
    );
    expect(changes.map((row) => [row.action, row.target])).toEqual(
      expect.arrayContaining([
        ['org.update', web],
        ['org.create', null],
      ]),
    );
    expect(changes.find((row) => row.action === 'org.update')?.detail).toEqual({
      notifications: { approvals_slack_url: { configured: true, host: `127.0.0.1:${webSlack.port}` } },
    });
    // The notifier logs each change, with the org and the host only.
    expect(logs.join('')).toContain('org approvals channel set');
    const everything = JSON.stringify([listed.body, shown.body, audit.body]) + logs.join('');
    for (const path of [payPath, webPath]) expect(everything).not.toContain(path.split('/').pop());
    const deliveries = await request(relay.url).get('/admin/deliveries?limit=200').set(admin).expect(200);
    expect(JSON.stringify(deliveries.body)).not.toContain(payPath.split('/').pop());
    // Stored sealed: the org's record and the delivery rows of its notices alike.
    for (const path of [payPath, webPath]) expect(await tablesContaining(path.split('/').pop() as string)).toEqual([]);
  });

  it('refuses a URL the outbound rules refuse with 400 naming the field, and writes nothing', async () => {
    const refused = `refused-${suffix}`;
    for (const url of ['http://hooks.example.com/services/x', 'ftp://127.0.0.1/x', 'https://user:pw@hooks.example.com/x']) {
      const response = await request(relay.url)
        .post('/admin/orgs')
        .set(admin)
        .send({ name: refused, notifications: { approvals_slack_url: url } })
        .expect(400);
      expect(response.body.error).toMatchObject({ reason: 'invalid_params', data: { field: 'notifications.approvals_slack_url' } });
      expect(JSON.stringify(response.body)).not.toContain('hooks.example.com/services');
    }
    await request(relay.url).get(`/admin/orgs/${refused}`).set(admin).expect(404);
    await request(relay.url)
      .patch(`/admin/orgs/${pay}`)
      .set(admin)
      .send({ display_name: 'Payments', notifications: { approvals_slack_url: 'http://hooks.example.com/x' } })
      .expect(400);
    const unchanged = await request(relay.url).get(`/admin/orgs/${pay}`).set(admin).expect(200);
    expect(unchanged.body).toMatchObject({ display_name: null, notifications: { approvals_slack_url: { configured: true } } });
    await request(relay.url)
      .patch(`/admin/orgs/nobody-${suffix}`)
      .set(admin)
      .send({ notifications: { approvals_slack_url: paySlack.url(payPath) } })
      .expect(404);
  });

  it('sets, shows and clears the channel from the CLI, never printing the URL', async () => {
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
    const org = `cli-${suffix}`;
    const path = slackPath();
    const created = await cli('orgs', 'create', org, '--approvals-slack-url', paySlack.url(path));
    expect(created).toMatchObject({ code: EXIT.ok });
    expect(created.stdout).toContain(`approvals:     Slack at 127.0.0.1:${paySlack.port}`);
    const shown = await cli('orgs', 'show', org, '--json');
    expect(JSON.parse(shown.stdout).notifications).toEqual({ approvals_slack_url: { configured: true, host: `127.0.0.1:${paySlack.port}` } });
    const refused = await cli('orgs', 'update', org, '--approvals-slack-url', 'http://hooks.example.com/x');
    expect(refused.code).not.toBe(EXIT.ok);
    expect(refused.stderr).toContain('notifications.approvals_slack_url');
    const cleared = await cli('orgs', 'update', org, '--approvals-slack-url', 'none');
    expect(cleared.stdout).toContain('approvals:     the relay’s channel (none of its own)');
    expect(created.stdout + shown.stdout + refused.stdout + refused.stderr + cleared.stdout).not.toContain(path.split('/').pop());
  });

  it("clears an org's channel with null: its held handoffs then go to the relay's", async () => {
    const cleared = await request(relay.url)
      .patch(`/admin/orgs/${web}`)
      .set(admin)
      .send({ notifications: { approvals_slack_url: null } })
      .expect(200);
    expect(cleared.body.notifications).toEqual({ approvals_slack_url: { configured: false, host: null } });
    const toWeb = await send(otto, frank, 'Please check the banner');
    expect((await slackDeliveries(toWeb, relaySlack)).map((delivery) => delivery.target_host)).toEqual([hostOf(relaySlack)]);
    expect(allPosts(toWeb)).toEqual({ pay: 0, web: 0, relay: 1 });
  });
});

/** RELAY_APPROVALS_SLACK_ORG_ONLY=true: the relay's channel hears of no org's handoffs. */
describe('org approvals notifications with RELAY_APPROVALS_SLACK_ORG_ONLY', () => {
  let relay: RelayHarness;
  let orgSlack: WebhookSink;
  let relaySlack: WebhookSink;
  const suffix = randomBytes(3).toString('hex');

  beforeAll(async () => {
    [orgSlack, relaySlack] = await Promise.all([WebhookSink.start(), WebhookSink.start()]);
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_APPROVALS_SLACK_WEBHOOK_URL: relaySlack.url('/relay-approvers'),
        RELAY_APPROVALS_SLACK_ORG_ONLY: 'true',
        RELAY_APPROVALS_WEBHOOK_URL: relaySlack.url('/approvers-hook'),
        RELAY_APPROVALS_WEBHOOK_SECRET: APPROVERS_SECRET,
        RELAY_SLACK_MIN_INTERVAL_MS: '0',
      },
    });
  });

  afterAll(async () => {
    await relay?.stop();
    await Promise.all([orgSlack?.stop(), relaySlack?.stop()]);
  });

  it("posts an org's held handoff to its channel, and one of an org without a channel nowhere on Slack", async () => {
    const withChannel = `own-${suffix}`;
    await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: withChannel, notifications: { approvals_slack_url: orgSlack.url('/own') } })
      .expect(201);
    const owner = await registerAgent(relay, { handle: `ana@${withChannel}`, name: 'Ana' });
    const bare = await registerAgent(relay, { handle: `otto@bare-${suffix}`, name: 'Otto' });
    for (const agent of [owner, bare]) {
      await request(relay.url)
        .put(`/admin/agents/${agent.agent.handle}/trust`)
        .set(admin)
        .send({ allow: [`*@${withChannel}`, `*@bare-${suffix}`], hold: [{ name: 'outsiders', outside_org: true }] })
        .expect(200);
    }
    const toOwner = (
      await ok(relay.url, bare.api_key, 'message/send', { recipient: owner.agent.handle, message: { role: 'user', parts: [{ type: 'text', text: 'one' }] } })
    ).task_id as string;
    const toBare = (
      await ok(relay.url, owner.api_key, 'message/send', { recipient: bare.agent.handle, message: { role: 'user', parts: [{ type: 'text', text: 'two' }] } })
    ).task_id as string;
    await eventually(() => orgSlack.requests.some((entry) => entry.body.includes(toOwner)), DEADLINE_MS);
    // The approvers' webhook hears of both; once it has, every delivery of those events is in the log.
    const hooked = (taskId: string): boolean => relaySlack.to('/approvers-hook').some((entry) => entry.body.includes(taskId));
    await eventually(() => hooked(toOwner) && hooked(toBare), DEADLINE_MS);
    const channelsOf = async (taskId: string): Promise<string[]> =>
      ((await request(relay.url).get(`/admin/deliveries?task_id=${taskId}`).set(admin).expect(200)).body.deliveries as DeliveryView[])
        .map((delivery) => `${delivery.channel} ${delivery.target_host}`)
        .sort();
    expect(await channelsOf(toOwner)).toEqual([`slack http://127.0.0.1:${orgSlack.port}`, `webhook http://127.0.0.1:${relaySlack.port}`]);
    expect(await channelsOf(toBare)).toEqual([`webhook http://127.0.0.1:${relaySlack.port}`]);
    expect(relaySlack.to('/relay-approvers')).toEqual([]);
    expect(orgSlack.requests.filter((entry) => entry.body.includes(toBare))).toEqual([]);
  });
});
