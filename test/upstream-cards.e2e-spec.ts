import request from 'supertest';
import { Role, TaskState, type Task } from '@a2a-js/sdk';
import { type Client } from '@a2a-js/sdk/client';
import { MetricsServer } from '@app/metrics';
import type { AdminAuditEntry, AgentRecord, UpstreamCallView, UpstreamChangeDecisionReply, UpstreamRefreshReply, UpstreamStatusView } from '@app/contracts';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { PrometheusScrape } from './support/prometheus-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;

/** Sends through the relay and waits until the relay task completed with the upstream's answer. */
async function handOff(client: Client, text: string): Promise<Task> {
  const sent = (await client.sendMessage({
    tenant: '',
    message: userMessage(text),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  })) as Task;
  return eventually(
    async () => {
      const task = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      return task;
    },
    30_000,
    100,
  );
}

/** The v1.0 card's interface, moved to another server. */
function movedTo(upstream: UpstreamAgent): Record<string, unknown> {
  return { supportedInterfaces: [{ url: upstream.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }] };
}

function cliIo() {
  let out = '';
  return { io: { stdout: (text: string) => (out += text), stderr: (text: string) => (out += text) }, output: () => out };
}

describe('Upstream agents: card refresh with operator review, health, metrics and the calls of each handoff', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  const upstreams: UpstreamAgent[] = [];

  const start = async (): Promise<UpstreamAgent> => {
    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(upstream);
    return upstream;
  };
  const register = async (upstream: UpstreamAgent, name = 'Echo'): Promise<string> => {
    const handle = uniqueHandle('card', 'upcard');
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name, upstream: { card_url: upstream.cardUrl } });
    expect(registered.status).toBe(201);
    return handle;
  };
  const admin = (method: 'get' | 'post', path: string) => request(relay.url)[method](path).set('authorization', ADMIN);
  const audit = async (): Promise<AdminAuditEntry[]> => (await admin('get', '/admin/audit?limit=200').expect(200)).body.items as AdminAuditEntry[];

  beforeAll(async () => {
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: '500',
        // Refreshed only when asked, so each refresh below is the one that sees the change.
        RELAY_UPSTREAM_CARD_REFRESH_MS: '0',
      },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upcard'), name: 'Alice' });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
  });

  it('a card that changes only its description, skills and name takes effect at once; unchanged next time', async () => {
    const upstream = await start();
    const handle = await register(upstream);
    upstream.setCard({ name: 'Echo renamed', description: 'Echoes louder', skills: [{ id: 'echo' }, { id: 'shout', name: 'shout' }] });

    const refreshed = (await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply;
    expect(refreshed.refresh).toEqual({
      outcome: 'applied',
      error: null,
      changes: [
        { field: 'name', old: 'Echo upstream', new: 'Echo renamed', review: false },
        { field: 'description', old: 'An A2A server of the official SDK that echoes what it is sent', new: 'Echoes louder', review: false },
        { field: 'skills', old: ['echo'], new: ['echo', 'shout'], review: false },
      ],
    });
    expect(refreshed.card.pending_change).toBeNull();
    const agent = (await admin('get', `/admin/agents/${handle}`).expect(200)).body as AgentRecord;
    expect(agent).toMatchObject({ name: 'Echo renamed', description: 'Echoes louder', skills: ['echo', 'shout'] });
    expect(agent.upstream?.url).toBe(upstream.url);

    expect(((await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply).refresh).toEqual({
      outcome: 'unchanged',
      changes: [],
      error: null,
    });
    expect(await audit()).toContainEqual(
      expect.objectContaining({
        actor: 'admin token',
        action: 'upstream.card_refresh',
        target: handle,
        detail: { outcome: 'applied', fields: ['name', 'description', 'skills'] },
      }),
    );
  });

  it('a new URL waits for an operator: deliveries stay on the accepted card until it is accepted, then go to the new server', async () => {
    const first = await start();
    const second = await start();
    const handle = await register(first);
    const client = await senderClient(relay, sender, handle);
    first.setCard(movedTo(second));

    const refreshed = (await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply;
    expect(refreshed.refresh.outcome).toBe('pending');
    expect(refreshed.card.pending_change?.changes).toEqual([{ field: 'url', old: first.url, new: second.url, review: true }]);
    expect(refreshed.upstream.url).toBe(first.url);
    const shown = (await admin('get', `/admin/agents/${handle}/upstream`).expect(200)).body as UpstreamStatusView;
    expect(shown.card.pending_change?.changes).toEqual(refreshed.card.pending_change?.changes);

    // The pending change is in the metrics of the replica that scrapes.
    const notifier = relay.services.get('notifier')![0];
    const scrape = async () => PrometheusScrape.parse(await (await fetch(`${notifier.get(MetricsServer).url}/metrics`)).text());
    expect((await scrape()).value('agentrelay_upstream_card_change_pending', { agent: handle })).toBe(1);

    await handOff(client, 'before the review');
    expect(first.tasksCreated).toHaveLength(1);
    expect(second.tasksCreated).toHaveLength(0);

    const accepted = (await admin('post', `/admin/agents/${handle}/upstream/pending-change/accept`).expect(200)).body as UpstreamChangeDecisionReply;
    expect(accepted.upstream.url).toBe(second.url);
    expect(accepted.card.pending_change).toBeNull();
    expect(accepted.decided.changes).toEqual([{ field: 'url', old: first.url, new: second.url, review: true }]);
    expect(((await admin('get', `/admin/agents/${handle}`).expect(200)).body as AgentRecord).upstream?.url).toBe(second.url);
    expect((await scrape()).value('agentrelay_upstream_card_change_pending', { agent: handle })).toBe(0);

    const answered = await handOff(client, 'after the review');
    expect(answered.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap((message) => message.parts)).toHaveLength(1);
    expect(second.tasksCreated).toHaveLength(1);
    expect(first.tasksCreated).toHaveLength(1);
    expect(await audit()).toContainEqual(
      expect.objectContaining({
        actor: 'admin token',
        action: 'upstream.card_change_accept',
        target: handle,
        detail: { changes: [{ field: 'url', old: first.url, new: second.url }] },
      }),
    );
    // Nothing waits any more.
    const again = await admin('post', `/admin/agents/${handle}/upstream/pending-change/accept`);
    expect(again.status).toBe(409);
    expect(again.body.error.reason).toBe('no_pending_change');
  });

  it('a security change rejected: the accepted card stays, and the same change is not proposed again', async () => {
    const upstream = await start();
    const elsewhere = await start();
    const handle = await register(upstream);
    const schemes = { securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'X-New-Key' } } } };
    upstream.setCard(schemes);

    const refreshed = (await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply;
    expect(refreshed.refresh.outcome).toBe('pending');
    expect(refreshed.card.pending_change?.changes).toEqual([
      { field: 'security', old: null, new: { schemes: { key: { apiKeySecurityScheme: { location: 'header', name: 'X-New-Key' } } } }, review: true },
    ]);
    const rejected = (await admin('post', `/admin/agents/${handle}/upstream/pending-change/reject`).expect(200)).body as UpstreamChangeDecisionReply;
    expect(rejected.card.pending_change).toBeNull();
    expect(rejected.upstream.url).toBe(upstream.url);
    expect(((await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply).refresh.outcome).toBe(
      'rejected_before',
    );
    expect(((await admin('get', `/admin/agents/${handle}/upstream`).expect(200)).body as UpstreamStatusView).card.pending_change).toBeNull();

    // Still delivered to the accepted card; a different change is proposed again.
    await handOff(await senderClient(relay, sender, handle), 'still here');
    expect(upstream.tasksCreated).toHaveLength(1);
    upstream.setCard({ ...schemes, ...movedTo(elsewhere) });
    const next = (await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply;
    expect(next.refresh.outcome).toBe('pending');
    expect(next.card.pending_change?.changes.map((change) => change.field)).toEqual(['url', 'security']);
    expect(await audit()).toContainEqual(expect.objectContaining({ action: 'upstream.card_change_reject', target: handle }));
  });

  it('a card that cannot be read: the refresh says why, the accepted card stays; an agent without upstream is a 400', async () => {
    const upstream = await start();
    const handle = await register(upstream);
    upstream.setCard({ supportedInterfaces: [{ url: upstream.url, protocolBinding: 'GRPC', protocolVersion: '1.0' }] });
    const failed = (await admin('post', `/admin/agents/${handle}/upstream/refresh`).expect(200)).body as UpstreamRefreshReply;
    expect(failed.refresh.outcome).toBe('failed');
    expect(failed.refresh.error).toContain('offers no JSON-RPC or HTTP+JSON interface');
    expect(failed.card.last_refresh_error).toBe(failed.refresh.error);
    expect(failed.upstream.url).toBe(upstream.url);

    const plain = await admin('get', `/admin/agents/${sender.agent.handle}/upstream`);
    expect(plain.status).toBe(400);
    expect(plain.body.error.message).toContain('is not an upstream agent');
    expect((await admin('get', `/admin/agents/nobody@upcard/upstream`)).status).toBe(404);
  });

  it('health, the per-handle metrics and the calls of a handoff; the CLI refreshes and shows the pending change', async () => {
    const upstream = await start();
    const moved = await start();
    const handle = await register(upstream);
    const task = await handOff(await senderClient(relay, sender, handle), 'count me');

    const status = (await admin('get', `/admin/agents/${handle}/upstream`).expect(200)).body as UpstreamStatusView;
    expect(status.health.breaker).toBe('closed');
    expect(status.tls).toBeNull();
    await eventually(async () => {
      const health = ((await admin('get', `/admin/agents/${handle}/upstream`).expect(200)).body as UpstreamStatusView).health;
      expect(health.last_success_at).not.toBeNull();
      expect(health.last_failure_at).toBeNull();
    }, 10_000);

    const calls = await eventually(async () => {
      const listed = (await admin('get', `/admin/tasks/${task.id}/upstream-calls`).expect(200)).body.calls as UpstreamCallView[];
      expect(listed.map((call) => call.method)).toEqual(expect.arrayContaining(['SendMessage', 'GetTask']));
      return listed;
    }, 10_000);
    expect(calls[0]).toMatchObject({ handle, method: 'SendMessage', outcome: 'ok', status_code: 200, error: null });
    expect(calls.every((call) => call.duration_ms >= 0 && !Number.isNaN(Date.parse(call.at)))).toBe(true);
    expect(calls.map((call) => call.at)).toEqual([...calls.map((call) => call.at)].sort());
    expect(((await admin('get', `/admin/tasks/no-such-task/upstream-calls`).expect(200)).body.calls as unknown[]).length).toBe(0);

    const notifier = relay.services.get('notifier')![0];
    const scrape = PrometheusScrape.parse(await (await fetch(`${notifier.get(MetricsServer).url}/metrics`)).text());
    expect(scrape.value('agentrelay_upstream_call_duration_seconds_count', { agent: handle, method: 'SendMessage' })).toBeGreaterThanOrEqual(1);
    expect(scrape.value('agentrelay_upstream_call_duration_seconds_count', { agent: handle, method: 'GetTask' })).toBeGreaterThanOrEqual(1);
    expect(scrape.value('agentrelay_upstream_call_duration_seconds_count', { agent: handle, method: 'GetAgentCard' })).toBe(1);
    expect(scrape.value('agentrelay_upstream_breaker_state', { agent: handle, state: 'closed' })).toBe(1);
    expect(scrape.value('agentrelay_upstream_breaker_state', { agent: handle, state: 'open' })).toBe(0);

    // A server that stopped answering: a failure with its method and reason, counted by kind.
    upstream.setCard(movedTo(moved));
    await upstream.kill();
    const env = { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    const failed = cliIo();
    expect(await run(['agents', 'refresh-card', handle], env, failed.io)).toBe(EXIT.apiError);
    expect(failed.output()).toContain('The card could not be read: the accepted card stays.');
    const health = ((await admin('get', `/admin/agents/${handle}/upstream`).expect(200)).body as UpstreamStatusView).health;
    await eventually(async () => {
      const after = ((await admin('get', `/admin/agents/${handle}/upstream`).expect(200)).body as UpstreamStatusView).health;
      expect(after).toMatchObject({ last_failure_method: 'GetAgentCard' });
      expect(after.last_failure_reason).toMatch(/^connection: /);
    }, 10_000);
    expect(health.last_success_at).not.toBeNull();
    const errors = PrometheusScrape.parse(await (await fetch(`${notifier.get(MetricsServer).url}/metrics`)).text());
    expect(errors.value('agentrelay_upstream_call_errors_total', { agent: handle, method: 'GetAgentCard', kind: 'connection' })).toBe(1);

    await upstream.revive();
    const pending = cliIo();
    expect(await run(['agents', 'refresh-card', handle], env, pending.io)).toBe(EXIT.ok);
    expect(pending.output()).toContain('the change waits for review');
    expect(pending.output()).toContain(`url: "${upstream.url}" -> "${moved.url}"`);
    const shown = cliIo();
    expect(await run(['agents', 'upstream', handle], env, shown.io)).toBe(EXIT.ok);
    expect(shown.output()).toContain('PENDING CARD CHANGE');
    const accepted = cliIo();
    expect(await run(['agents', 'accept-card', handle, '--json'], env, accepted.io)).toBe(EXIT.ok);
    expect((JSON.parse(accepted.output()) as UpstreamChangeDecisionReply).upstream.url).toBe(moved.url);
  });
});

describe('Upstream agents: cards refreshed on a schedule by one replica', () => {
  let relay: RelayHarness;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_UPSTREAM_CARD_REFRESH_MS: '1000' } });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
  });

  it('a harmless change is applied and an interface change waits for review, without anyone asking', async () => {
    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    const other = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    upstreams.push(upstream, other);
    const handle = uniqueHandle('sched', 'upcard');
    await request(relay.url)
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Echo', upstream: { card_url: upstream.cardUrl } })
      .expect(201);

    upstream.setCard({ description: 'Described on schedule' });
    await eventually(
      async () =>
        expect((await request(relay.url).get(`/admin/agents/${handle}`).set('authorization', ADMIN).expect(200)).body.description).toBe(
          'Described on schedule',
        ),
      20_000,
      200,
    );
    upstream.setCard({ description: 'Described on schedule', ...movedTo(other) });
    const status = await eventually(
      async () => {
        const shown = (await request(relay.url).get(`/admin/agents/${handle}/upstream`).set('authorization', ADMIN).expect(200)).body as UpstreamStatusView;
        expect(shown.card.pending_change?.changes).toEqual([{ field: 'url', old: upstream.url, new: other.url, review: true }]);
        return shown;
      },
      20_000,
      200,
    );
    expect(status.upstream.url).toBe(upstream.url);
    expect(status.card.last_refresh_at).not.toBeNull();
    expect(((await request(relay.url).get(`/admin/agents/${handle}`).set('authorization', ADMIN).expect(200)).body as AgentRecord).upstream?.url).toBe(
      upstream.url,
    );
  });
});
