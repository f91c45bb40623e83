import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { TaskState, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import type { UpstreamCallView, UpstreamStatusView } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import { SCREENSHOT_DIR, seriousAccessibilityViolations, shown, type ConsoleBrowser, signInToConsole, consoleSessionHeaders } from './support/console-browser';
import { consoleOidcEnv, registerConsoleClient, startConsoleProvider } from './support/console-oidc';
import { eventually } from './support/eventually';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { apiKeyInterceptor, userMessage } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** The v1.0 card's interface, moved to another server. */
function movedTo(upstream: UpstreamAgent): Record<string, unknown> {
  return { supportedInterfaces: [{ url: upstream.url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }] };
}

/**
 * Upstream agents in the console (docs/operations.md#upstream-agents), signed in through the
 * organisation's identity provider: the agents list marks the agent with its host and health; its
 * page shows the accepted card and health; the handoff's timeline has the relay's calls to the
 * official SDK server merged by time; a refresh that reads a moved interface shows the old → new
 * panel, an operator accepts it in the browser and the page shows the new card; a viewer sees no
 * control and the API refuses it 403; an admin connects an upstream agent with a form that says a
 * refusal at its input and never shows the credential back; the pages are axe-clean.
 */
describe('console upstream agents in a browser', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  let first: UpstreamAgent;
  let second: UpstreamAgent;
  let handle: string;
  let task: Task;
  const browsers: ConsoleBrowser[] = [];
  const consoleUrl = (path = ''): string => `${relay.url}/console/${path}`;
  const text = `Echo this for the console ${randomUUID().slice(0, 6)}`;

  async function signInAs(login: string, name: string): Promise<ConsoleBrowser> {
    const browser = await signInToConsole(consoleUrl(), provider.issuer, login, name);
    browsers.push(browser);
    return browser;
  }

  const sessionOf = (browser: ConsoleBrowser): Promise<{ cookie: string; 'x-csrf-token': string }> => consoleSessionHeaders(browser, relay.url);

  async function checkPage(page: Page, name: string): Promise<void> {
    expect([name, await seriousAccessibilityViolations(page)]).toEqual([name, []]);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  const upstreamStatus = async (): Promise<UpstreamStatusView> =>
    (await request(relay.url).get(`/admin/agents/${handle}/upstream`).set(admin).expect(200)).body as UpstreamStatusView;

  /** The accepted card's facts on the agent page, by their term. */
  const fact = (page: Page, term: string) => page.locator(`dt:text-is("${term}") + dd`);

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    provider = await startConsoleProvider([
      { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
      { sub: 'otto', claims: { email: 'otto@acme.test', name: 'Otto Operator', groups: ['relay-ops'] } },
      { sub: 'ada', claims: { email: 'ada@acme.test', name: 'Ada Admin', agentrelay_role: 'admin' } },
    ]);
    relay = await RelayHarness.start({
      env: {
        RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST),
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: '500',
        // Read only when asked, so the refresh in the browser is the one that sees the change.
        RELAY_UPSTREAM_CARD_REFRESH_MS: '0',
        ...consoleOidcEnv(provider, { RELAY_CONSOLE_OIDC_GROUP_ROLES: JSON.stringify({ 'relay-ops': 'operator' }) }),
      },
    });
    registerConsoleClient(provider, relay.url);
    first = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    second = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0' });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upconsole'), name: 'Alice' });
    handle = uniqueHandle('echo', 'upconsole');
    await request(relay.url)
      .post('/admin/agents')
      .set(admin)
      .send({ handle, name: 'Echo', upstream: { card_url: first.cardUrl } })
      .expect(201);

    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
        transports: [new JsonRpcTransportFactory()],
        clientConfig: { interceptors: [apiKeyInterceptor(sender.api_key)] },
      }),
    );
    const client = await factory.createFromUrl(`${relay.url}/a2a/${handle}/`);
    const sent = (await client.sendMessage({
      tenant: '',
      message: userMessage(text),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
      metadata: undefined,
    })) as Task;
    task = await eventually(
      async () => {
        const current = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
        expect(current.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
        return current;
      },
      30_000,
      100,
    );
    await eventually(async () => {
      const calls = (await request(relay.url).get(`/admin/tasks/${task.id}/upstream-calls`).set(admin).expect(200)).body.calls as UpstreamCallView[];
      expect(calls.map((call) => call.method)).toEqual(expect.arrayContaining(['SendMessage', 'GetTask']));
      expect((await upstreamStatus()).health.last_success_at).not.toBeNull();
    }, 30_000);
  });

  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await relay?.stop();
    await Promise.all([first?.close(), second?.close()]);
    await provider?.stop();
  });

  it('an operator sees the upstream agent in the list and on its page, and its calls in the handoff timeline', async () => {
    const { page } = await signInAs('otto', 'Otto Operator');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Agents' }).click();
    const row = await shown(page.getByRole('table', { name: 'Registered agents' }).getByRole('row').filter({ hasText: handle }));
    await shown(row.getByText('A2A server'));
    await shown(row.getByText(new URL(first.url).host));
    await shown(row.getByTestId('upstream-health').getByText('Healthy'));
    expect(await page.getByRole('row').filter({ hasText: sender.agent.handle }).getByText('Relay inbox').count()).toBe(1);
    // Registering needs the admin role, so an operator is offered no form to connect an agent.
    expect(await page.getByRole('region', { name: 'Connect an A2A agent' }).count()).toBe(0);

    await row.getByRole('link', { name: handle }).click();
    const section = await shown(page.getByRole('region', { name: 'Upstream A2A server' }));
    await shown(fact(page, 'Card URL').getByText(first.cardUrl, { exact: true }));
    await shown(fact(page, 'Interface URL').getByText(first.url, { exact: true }));
    await shown(fact(page, 'Binding').getByText('JSON-RPC'));
    await shown(fact(page, 'Protocol version').getByText('1.0'));
    await shown(fact(page, 'Authentication').getByText('None'));
    await shown(fact(page, 'Client certificate (mTLS)').getByText('None'));
    await shown(fact(page, 'Last failure').getByText('None'));
    await shown(fact(page, 'Circuit breaker').getByText(/^Closed/));
    await shown(section.getByTestId('upstream-health').getByText('Healthy'));
    await shown(section.getByRole('button', { name: 'Refresh card' }));
    await checkPage(page, 'upstream-operator-agent');

    await page.goto(consoleUrl(`handoffs/${encodeURIComponent(task.id)}`));
    const timeline = await shown(page.getByRole('list', { name: 'Events, oldest first' }));
    const sendCall = await shown(timeline.getByRole('article', { name: `Upstream call SendMessage to ${handle}: ok` }).first());
    await shown(sendCall.getByText('HTTP 200'));
    await shown(sendCall.getByText(/^\d+ ms$/));
    await shown(timeline.getByRole('article', { name: `Upstream call GetTask to ${handle}: ok` }).first());
    const labels = await timeline.getByRole('article').evaluateAll((articles) => articles.map((article) => article.getAttribute('aria-label') ?? ''));
    const created = labels.findIndex((label) => label.startsWith('Created'));
    const sendMessage = labels.findIndex((label) => label.startsWith('Upstream call SendMessage'));
    const completed = labels.findIndex((label) => label.startsWith('Completed'));
    expect([created >= 0, created < sendMessage, sendMessage < completed]).toEqual([true, true, true]);
    await checkPage(page, 'upstream-operator-handoff');
  });

  it('a refresh reads the moved interface as a pending change; the operator accepts it in the browser and the page shows the new card', async () => {
    first.setCard(movedTo(second));
    const { page } = await signInAs('otto', 'Otto Operator');
    await page.goto(consoleUrl(`agents/${encodeURIComponent(handle)}`));
    const section = await shown(page.getByRole('region', { name: 'Upstream A2A server' }));
    await section.getByRole('button', { name: 'Refresh card' }).click();
    await shown(page.getByTestId('refresh-outcome').getByText(/waits for a decision/));
    const panel = await shown(page.getByRole('region', { name: 'Card change pending' }));
    const urlRow = await shown(panel.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'url' }) }));
    await shown(urlRow.getByText(first.url, { exact: true }));
    await shown(urlRow.getByText(second.url, { exact: true }));
    await shown(section.getByTestId('upstream-health').getByText('Card change pending'));
    await shown(fact(page, 'Interface URL').getByText(first.url, { exact: true }));
    await checkPage(page, 'upstream-operator-pending');
    expect((await upstreamStatus()).card.pending_change?.changes).toEqual([{ field: 'url', old: first.url, new: second.url, review: true }]);

    await panel.getByRole('button', { name: 'Accept' }).click();
    const dialog = await shown(page.getByRole('dialog', { name: 'Accept the card change?' }));
    await dialog.getByRole('button', { name: 'Accept change' }).click();
    await shown(fact(page, 'Interface URL').getByText(second.url, { exact: true }));
    await shown(section.getByText('No card change waits for a decision.'));
    expect(await page.getByRole('region', { name: 'Card change pending' }).count()).toBe(0);
    await checkPage(page, 'upstream-operator-accepted');
    const accepted = await upstreamStatus();
    expect([accepted.upstream.url, accepted.card.pending_change]).toEqual([second.url, null]);
    const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    expect(
      audit.body.items.find((entry: { action: string; target: string }) => entry.action === 'upstream.card_change_accept' && entry.target === handle),
    ).toMatchObject({
      actor_sub: 'otto',
      detail: { changes: [{ field: 'url', old: first.url, new: second.url }] },
    });
  });

  it('a viewer reads the upstream section and a pending change with no control; the API refuses it 403', async () => {
    first.setCard({});
    const refreshed = await request(relay.url).post(`/admin/agents/${handle}/upstream/refresh`).set(admin).expect(200);
    expect(refreshed.body.refresh.outcome).toBe('pending');

    const browser = await signInAs('vera', 'Vera Viewer');
    const { page } = browser;
    await page.goto(consoleUrl(`agents/${encodeURIComponent(handle)}`));
    const section = await shown(page.getByRole('region', { name: 'Upstream A2A server' }));
    const panel = await shown(page.getByRole('region', { name: 'Card change pending' }));
    await shown(panel.getByText('An operator decides card changes.'));
    await shown(fact(page, 'Interface URL').getByText(second.url, { exact: true }));
    for (const name of ['Refresh card', 'Accept', 'Reject']) expect([name, await section.getByRole('button', { name }).count()]).toEqual([name, 0]);
    await checkPage(page, 'upstream-viewer-agent');

    await page.goto(consoleUrl(`handoffs/${encodeURIComponent(task.id)}`));
    await shown(
      page
        .getByRole('list', { name: 'Events, oldest first' })
        .getByRole('article', { name: `Upstream call SendMessage to ${handle}: ok` })
        .first(),
    );
    await checkPage(page, 'upstream-viewer-handoff');

    const session = await sessionOf(browser);
    for (const path of ['refresh', 'pending-change/accept', 'pending-change/reject']) {
      const refused = await request(relay.url).post(`/admin/agents/${handle}/upstream/${path}`).set(session).send({});
      expect([path, refused.status, refused.body.error.reason]).toEqual([path, 403, 'role_forbidden']);
    }
    expect((await upstreamStatus()).upstream.url).toBe(second.url);
  });

  it('an admin connects an upstream agent from the agents page: a refused card URL is said at its input, nothing is created, and the credential is never shown back', async () => {
    const connected = uniqueHandle('echo2', 'upconsole');
    const token = `bearer-${randomUUID()}`;
    const { page } = await signInAs('ada', 'Ada Admin');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Agents' }).click();
    const form = await shown(page.getByRole('region', { name: 'Connect an A2A agent' }));
    await form.getByLabel('Handle').fill(connected);
    await form.getByLabel('Name').fill('Echo two');
    await form.getByLabel('Credential').selectOption({ label: 'Bearer token' });
    await form.getByLabel('Bearer token').fill(token);
    await checkPage(page, 'upstream-admin-connect-form');

    // The SSRF guard refuses a card URL with credentials in it (loopback is allowed in this relay).
    const cardUrl = form.getByLabel('Agent card URL');
    await cardUrl.fill(first.cardUrl.replace('http://', 'http://someone:secret@'));
    await form.getByRole('button', { name: 'Connect' }).click();
    const refusal = await shown(form.getByRole('alert'));
    expect(await refusal.textContent()).toMatch(/^upstream\.card_url: .*credentials in the URL are not allowed/);
    expect(await cardUrl.getAttribute('aria-invalid')).toBe('true');
    const describedBy = ((await cardUrl.getAttribute('aria-describedby')) ?? '').split(' ');
    const alertsDescribing = await Promise.all(describedBy.map((id) => form.locator(`[id="${id}"]`).getByRole('alert').count()));
    expect(alertsDescribing).toContain(1);
    expect(await form.getByLabel('Bearer token').inputValue()).toBe('');
    await checkPage(page, 'upstream-admin-connect-refused');
    await request(relay.url).get(`/admin/agents/${connected}`).set(admin).expect(404);

    await cardUrl.fill(first.cardUrl);
    await form.getByLabel('Bearer token').fill(token);
    await form.getByRole('button', { name: 'Connect' }).click();
    const done = await shown(page.getByRole('region', { name: `Connected ${connected}` }));
    expect((await done.getByLabel('API key').inputValue()).length).toBeGreaterThan(20);
    expect(await page.content()).not.toContain(token);
    await checkPage(page, 'upstream-admin-connected');
    const record = await request(relay.url).get(`/admin/agents/${connected}`).set(admin).expect(200);
    expect(record.body.upstream).toMatchObject({ card_url: first.cardUrl, url: first.url, auth_scheme: 'bearer' });
    expect(JSON.stringify(record.body)).not.toContain(token);

    await done.getByRole('link', { name: `Open ${connected}` }).click();
    await shown(page.getByRole('region', { name: 'Upstream A2A server' }));
    await shown(fact(page, 'Card URL').getByText(first.cardUrl, { exact: true }));
    await shown(fact(page, 'Authentication').getByText('Bearer token'));
    expect(await page.content()).not.toContain(token);
  });
});
