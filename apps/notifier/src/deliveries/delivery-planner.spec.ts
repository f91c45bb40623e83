import { TASK_EVENT_SCHEMA_VERSION, type TaskEvent, type TaskEventType } from '@app/contracts';
import type { AgentTarget, PushTarget } from '../targets/delivery-targets';
import { APPROVERS_TARGET, planApproverDeliveries, planDeliveries, planPushDeliveries, slackMessage, taskUrlFor } from './delivery-planner';

function event(type: TaskEventType, author: string | null = null): TaskEvent {
  return {
    schema_version: TASK_EVENT_SCHEMA_VERSION,
    event_id: 'e1',
    type,
    task_id: 'T1',
    context_id: 'C1',
    sender: 'alice@acme',
    recipient: 'bob@acme',
    state: 'accepted',
    sequence_no: null,
    occurred_at: '2026-01-01T00:00:00.000Z',
    task: {
      intent: 'ask_question',
      summary: 'Why <is> the build red & slow?',
      message_count: 1,
      latest_message: author ? { id: 'm1', sequence_no: 2, from: author, body: 'hi' } : null,
      result_summary: 'All green',
      reason: null,
    },
  };
}

const target = (handle: string, extra: Partial<AgentTarget> = {}): AgentTarget => ({
  handle,
  name: handle,
  notification_webhook_url: `https://hooks.example.com/${handle}`,
  slack_webhook_url: `https://hooks.slack.com/${handle}`,
  webhook_timeout_ms: null,
  upstream: null,
  disabled: false,
  ...extra,
});

const targets = new Map([
  ['alice@acme', target('alice@acme')],
  ['bob@acme', target('bob@acme')],
]);

describe('delivery planning', () => {
  it.each([
    ['created', null, 'bob@acme', 'a2a.task.created'],
    ['canceled', null, 'bob@acme', 'a2a.task.canceled'],
    ['accepted', null, 'alice@acme', 'a2a.task.accepted'],
    ['input_required', null, 'alice@acme', 'a2a.task.input_required'],
    ['completed', null, 'alice@acme', 'a2a.task.completed'],
    ['failed', null, 'alice@acme', 'a2a.task.failed'],
    ['rejected', null, 'alice@acme', 'a2a.task.rejected'],
    ['message_appended', 'bob@acme', 'alice@acme', 'a2a.task.message'],
    ['message_appended', 'alice@acme', 'bob@acme', 'a2a.task.message'],
  ] as const)('%s (author %s) goes to the webhook of %s as %s', (type, author, to, name) => {
    const webhooks = planDeliveries(event(type, author), targets, 'https://relay/t/{task_id}').filter((planned) => planned.channel === 'webhook');
    expect(webhooks).toHaveLength(1);
    expect(webhooks[0]).toMatchObject({ target_handle: to, event: name, url: `https://hooks.example.com/${to}` });
    expect(webhooks[0].body).toMatchObject({ type: name, timestamp: '2026-01-01T00:00:00.000Z', data: { event_id: 'e1' } });
  });

  it('does not tell the sender of its own answer to an input request (accepted again by its message)', () => {
    expect(planDeliveries(event('accepted', 'alice@acme'), targets, 'x').filter((planned) => planned.channel === 'webhook')).toEqual([]);
    expect(planDeliveries(event('accepted', 'bob@acme'), targets, 'x').map((planned) => planned.target_handle)).toEqual(['alice@acme']);
  });

  it("plans nothing for an artifact's own event (it is for live streams): no webhook, Slack post or push", () => {
    expect(planDeliveries(event('artifact_updated', 'bob@acme'), targets, 'x')).toEqual([]);
    const push = {
      config_id: 'c1',
      owner_handle: 'alice@acme',
      version: '1.0' as const,
      url: 'https://push',
      token: null,
      auth_scheme: null,
      auth_credentials: null,
    };
    expect(planPushDeliveries(event('artifact_updated'), [push])).toEqual([]);
    expect(planPushDeliveries(event('completed'), [push])).toHaveLength(1);
  });

  it('records what each webhook, push and upstream delivery asserts of who asked; Slack asserts nothing', () => {
    const upstream = { url: 'https://bob.example.com/a2a', binding: 'JSONRPC', protocol_version: '1.0' } as AgentTarget['upstream'];
    const withUpstream = new Map([...targets, ['bob@acme', target('bob@acme', { upstream })]]);
    const chained: TaskEvent = {
      ...event('created', 'alice@acme'),
      chain: { parent_task_id: 'P1', root_task_id: 'R1', depth: 2, root_sender: 'carol@acme' },
    };
    const facts = { sender: 'alice@acme', root_sender: 'carol@acme', root_task_id: 'R1', parent_task_id: 'P1', depth: 2 };
    const planned = planDeliveries(chained, withUpstream, '');
    expect(planned.map((delivery) => [delivery.channel, delivery.assertion ?? null])).toEqual([
      ['upstream', facts],
      ['webhook', facts],
      ['slack', null],
    ]);
    const push = {
      config_id: 'c1',
      owner_handle: 'alice@acme',
      version: '1.0' as const,
      url: 'https://push',
      token: null,
      auth_scheme: null,
      auth_credentials: null,
    };
    expect(planPushDeliveries(chained, [push])[0].assertion).toEqual(facts);
    const approvers = planApproverDeliveries(
      { ...chained, type: 'held' },
      { webhookUrl: 'https://hooks/approvers', slackWebhookUrl: 'https://slack/approvers', slackOrgOnly: false, consoleUrl: 'https://relay/console' },
    );
    expect(approvers.map((delivery) => [delivery.channel, delivery.assertion ?? null])).toEqual([
      ['webhook', facts],
      ['slack', null],
    ]);
  });

  it('to an upstream agent: the new task, the sender’s messages and its cancel; never the upstream’s own messages or other events', () => {
    const upstream = { url: 'https://bob.example.com/a2a', binding: 'JSONRPC', protocol_version: '1.0' } as AgentTarget['upstream'];
    const upstreamTargets = new Map([...targets, ['bob@acme', target('bob@acme', { upstream, notification_webhook_url: null, slack_webhook_url: null })]]);
    const planned = (type: TaskEventType, author: string | null) =>
      planDeliveries(event(type, author), upstreamTargets, '').filter((delivery) => delivery.channel === 'upstream');
    expect(planned('created', 'alice@acme')).toMatchObject([
      { event: 'a2a.task.created', target_handle: 'bob@acme', body: { action: 'create', message: { id: 'm1' } } },
    ]);
    expect(planned('message_appended', 'alice@acme')).toMatchObject([
      { event: 'a2a.task.message', body: { action: 'reply', task_id: 'T1', message: { id: 'm1' } } },
    ]);
    expect(planned('canceled', null)).toMatchObject([{ event: 'a2a.task.canceled', body: { action: 'cancel', message: null } }]);
    expect(planned('message_appended', 'bob@acme')).toEqual([]);
    expect(planned('created', null)).toEqual([]);
    for (const type of ['accepted', 'input_required', 'completed', 'failed', 'rejected'] as const) expect(planned(type, 'alice@acme')).toEqual([]);
  });

  it('posts to Slack for new handoffs (recipient) and completions (sender) only', () => {
    const slackOf = (type: TaskEventType): string[] =>
      planDeliveries(event(type), targets, 'https://relay/t/{task_id}')
        .filter((planned) => planned.channel === 'slack')
        .map((planned) => planned.target_handle);
    expect(slackOf('created')).toEqual(['bob@acme']);
    expect(slackOf('completed')).toEqual(['alice@acme']);
    expect(slackOf('accepted')).toEqual([]);
    expect(slackOf('failed')).toEqual([]);
  });

  it('plans nothing for unknown or disabled agents, or agents without URLs', () => {
    expect(planDeliveries(event('created'), new Map(), 'x')).toEqual([]);
    expect(planDeliveries(event('created'), new Map([['bob@acme', target('bob@acme', { disabled: true })]]), 'x')).toEqual([]);
    expect(
      planDeliveries(event('created'), new Map([['bob@acme', target('bob@acme', { notification_webhook_url: null, slack_webhook_url: null })]]), 'x'),
    ).toEqual([]);
  });

  it('writes a readable, escaped Slack message with a link to the thread', () => {
    const message = slackMessage(event('created'), 'https://relay/t/T1');
    expect(message.text).toBe('New handoff from alice@acme to bob@acme: Why <is> the build red & slow?');
    const section = (message.blocks[0] as { text: { text: string } }).text.text;
    expect(section).toContain('&lt;is&gt;');
    expect(section).toContain('&amp;');
    expect(JSON.stringify(message.blocks[1])).toContain('<https://relay/t/T1|Open the thread>');
    expect(slackMessage(event('completed'), 'u').text).toBe('bob@acme completed the handoff from alice@acme: All green');
  });

  it('names the thread by id when no thread URL is configured', () => {
    expect(taskUrlFor('', 'T1')).toBeNull();
    expect(taskUrlFor('https://ui.acme.dev/tasks/{task_id}', 'T 1')).toBe('https://ui.acme.dev/tasks/T%201');
    const context = JSON.stringify(slackMessage(event('created'), null).blocks[1]);
    expect(context).toContain('Thread `T1`');
    expect(context).not.toContain('Open the thread');
  });
});

describe("the approvers' notice of a held handoff", () => {
  const channels = {
    webhookUrl: 'https://hooks.acme.test/approvals',
    slackWebhookUrl: 'https://hooks.slack.com/approvers',
    slackOrgOnly: false,
    consoleUrl: 'https://relay.acme.test/console/',
  };
  const held: TaskEvent = {
    ...event('held'),
    state: 'held',
    audience: 'sender',
    hold: { rule: 'prod <changes>', reason: 'Held for approval', expires_at: '2026-01-02T00:00:00.000Z', four_eyes: true },
  };

  it("goes to the approvers' webhook and Slack, each linking the console page, and to no agent", () => {
    expect(planDeliveries(held, targets, '')).toEqual([]);
    const planned = planApproverDeliveries(held, channels);
    expect(planned.map((delivery) => [delivery.channel, delivery.target_handle, delivery.event, delivery.url])).toEqual([
      ['webhook', APPROVERS_TARGET, 'a2a.task.held', channels.webhookUrl],
      ['slack', APPROVERS_TARGET, 'a2a.task.held', channels.slackWebhookUrl],
    ]);
    expect(planned[0].body).toEqual({
      type: 'a2a.task.held',
      timestamp: held.occurred_at,
      data: held,
      approval_url: 'https://relay.acme.test/console/approvals/T1',
    });
    const slack = JSON.stringify(planned[1].body);
    expect(slack).toContain('<https://relay.acme.test/console/approvals/T1|Review it in the console>');
    expect(slack).toContain('prod &lt;changes&gt;');
    expect(slack).toContain('(four eyes)');
  });

  it('is sent only for held handoffs, and only where a channel is configured', () => {
    for (const type of ['created', 'rejected', 'completed'] as const) expect(planApproverDeliveries(event(type), channels)).toEqual([]);
    expect(planApproverDeliveries(held, { ...channels, slackWebhookUrl: '' }).map((delivery) => delivery.channel)).toEqual(['webhook']);
    expect(planApproverDeliveries(held, { ...channels, webhookUrl: '', slackWebhookUrl: '' })).toEqual([]);
  });

  it("goes to Slack in the channel of the recipient's org when it has one, and then never to the relay's", () => {
    const orgSlack = 'https://hooks.slack.com/acme-approvers';
    const planned = planApproverDeliveries(held, channels, { url: orgSlack });
    expect(planned.map((delivery) => [delivery.channel, delivery.url, delivery.sealed_url ?? false])).toEqual([
      ['webhook', channels.webhookUrl, false],
      ['slack', orgSlack, true],
    ]);
    expect(planApproverDeliveries(held, { ...channels, slackOrgOnly: true }, { url: orgSlack }).map((delivery) => delivery.url)).toContain(orgSlack);
    // A channel whose URL cannot be opened (its key retired) is still the org's: nothing goes to the relay's.
    expect(planApproverDeliveries(held, channels, { url: null }).map((delivery) => delivery.channel)).toEqual(['webhook']);
  });

  it("goes to the relay's Slack for an org without a channel, unless the relay keeps to org channels", () => {
    expect(planApproverDeliveries(held, channels, null).map((delivery) => delivery.url)).toContain(channels.slackWebhookUrl);
    expect(planApproverDeliveries(held, { ...channels, slackOrgOnly: true }, null).map((delivery) => delivery.channel)).toEqual(['webhook']);
  });

  it("tells them of a recipient's tool prompt that people answer, linking the approvals page; not of one its sender answers or that someone else wrote", () => {
    const question = (from: string, answeredBy?: string): TaskEvent => {
      const base = event('message_appended');
      const request = { kind: 'permission_request', request_id: 'R1', tool_name: 'Bash', ...(answeredBy ? { answered_by: answeredBy } : {}) };
      return {
        ...base,
        sequence_no: 2,
        task: { ...base.task, latest_message: { id: 'm2', sequence_no: 2, from, body: 'Permission needed', payload: { permission_request: request } } },
      };
    };
    const planned = planApproverDeliveries(question('bob@acme', 'approvers'), channels);
    expect(planned.map((delivery) => [delivery.channel, delivery.target_handle, delivery.event])).toEqual([
      ['webhook', APPROVERS_TARGET, 'a2a.task.tool_prompt'],
      ['slack', APPROVERS_TARGET, 'a2a.task.tool_prompt'],
    ]);
    expect(planned[0].body).toMatchObject({ type: 'a2a.task.tool_prompt', approval_url: 'https://relay.acme.test/console/approvals' });
    const slack = JSON.stringify(planned[1].body);
    expect(slack).toContain('wants to use `Bash` on a handoff from *alice@acme*');
    expect(slack).toContain('<https://relay.acme.test/console/handoffs/T1|The handoff> · <https://relay.acme.test/console/approvals|Answer it in the console>');
    expect(planApproverDeliveries(question('bob@acme', 'approvers'), channels, { url: 'https://hooks.slack.com/acme' })[1].url).toBe(
      'https://hooks.slack.com/acme',
    );
    expect(planApproverDeliveries(question('bob@acme'), channels)).toEqual([]);
    expect(planApproverDeliveries(question('alice@acme', 'approvers'), channels)).toEqual([]);
  });
});

const pushConfig = (extra: Partial<PushTarget>): PushTarget => ({
  config_id: 'cfg',
  owner_handle: 'alice@acme',
  version: '1.0',
  url: 'https://client.example.com/hook',
  token: null,
  auth_scheme: null,
  auth_credentials: null,
  ...extra,
});

describe('push deliveries', () => {
  const completedEvent: TaskEvent = { ...event('completed'), state: 'completed' };

  it('authenticates with the config: Authorization from scheme and credentials, the token as X-A2A-Notification-Token', () => {
    const [withAuth, withToken] = planPushDeliveries(completedEvent, [
      pushConfig({ config_id: 'a', auth_scheme: 'Bearer', auth_credentials: 'xyz' }),
      pushConfig({ config_id: 'b', version: '0.3', token: 'tok' }),
    ]);
    expect(withAuth).toMatchObject({
      channel: 'push',
      target_ref: 'push:a',
      content_type: 'application/a2a+json',
      headers: { authorization: 'Bearer xyz' },
      event: 'a2a.task.completed',
      body: { statusUpdate: { taskId: 'T1', status: { state: 'TASK_STATE_COMPLETED' } } },
    });
    expect(withToken).toMatchObject({
      target_ref: 'push:b',
      content_type: 'application/json',
      headers: { 'x-a2a-notification-token': 'tok' },
      body: { kind: 'task', metadata: { event: 'a2a.task.completed', event_id: 'e1' } },
    });
    expect(withToken.headers.authorization).toBeUndefined();
  });

  it("waits as long as the config's owner agent chose for its receivers, else the notifier's default", () => {
    const owner = { handle: 'alice@acme', webhook_timeout_ms: 2500 } as AgentTarget;
    const [ownersTimeout] = planPushDeliveries(completedEvent, [pushConfig({})], new Map([['alice@acme', owner]]));
    const [defaultTimeout] = planPushDeliveries(completedEvent, [pushConfig({})], new Map());
    expect(ownersTimeout.timeout_ms).toBe(2500);
    expect(defaultTimeout.timeout_ms).toBeNull();
  });
});
