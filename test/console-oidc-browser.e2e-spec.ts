import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import {
  SCREENSHOT_DIR,
  searchableWord,
  seriousAccessibilityViolations,
  shown,
  type ConsoleBrowser,
  signInToConsole,
  consoleSessionHeaders,
} from './support/console-browser';
import { consoleOidcEnv, registerConsoleClient, startConsoleProvider } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('console in a browser, signed in through the organisation identity provider', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let sink: WebhookSink;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let hookHandle: string;
  let taskId: string;
  let deadTaskId: string;
  let deadDeliveryId: string;
  const browsers: ConsoleBrowser[] = [];
  const word = searchableWord('bilby');
  const consoleUrl = (path = ''): string => `${relay.url}/console/${path}`;

  /** A fresh browser (no session at the relay or at the provider), signed in through the provider's own login form and consent. */
  async function signInAs(login: string, name: string): Promise<ConsoleBrowser> {
    const browser = await signInToConsole(consoleUrl(), provider.issuer, login, name);
    browsers.push(browser);
    return browser;
  }

  /** The browser's session as an API client would use it: its cookie, and the CSRF token the relay gives that cookie. */
  async function sessionOf(browser: ConsoleBrowser): Promise<{ cookie: string; csrf: string }> {
    const { cookie, 'x-csrf-token': csrf } = await consoleSessionHeaders(browser, relay.url);
    return { cookie, csrf };
  }

  async function openSection(page: Page, name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name }).click();
    await shown(page.getByRole('heading', { level: 1, name }));
  }

  async function checkPage(page: Page, name: string): Promise<void> {
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    sink = await WebhookSink.start();
    provider = await startConsoleProvider([
      { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
      { sub: 'aud', claims: { email: 'aud@acme.test', name: 'Aud Auditor', groups: ['auditors'] } },
      { sub: 'otto', claims: { email: 'otto@acme.test', name: 'Otto Operator', groups: ['relay-ops'] } },
    ]);
    relay = await RelayHarness.start({
      env: {
        RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST),
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
        RELAY_WEBHOOK_TIMEOUT_MS: '2000',
        ...consoleOidcEnv(provider, { RELAY_CONSOLE_OIDC_GROUP_ROLES: JSON.stringify({ auditors: 'auditor', 'relay-ops': 'operator' }) }),
      },
    });
    registerConsoleClient(provider, relay.url);
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
    const created = await ok(relay.url, bob.api_key, 'message/send', {
      task_id: null,
      recipient: frank.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: `Please review the ${word} refactor` }] },
    });
    taskId = created.task_id as string;
    hookHandle = uniqueHandle('hook', 'acme');
    const path = `/${hookHandle}/hook`;
    sink.plan(path, [{ status: 500 }]);
    const hooked = await registerAgent(relay, { handle: hookHandle, name: 'Hook', notification_webhook_url: sink.url(path) });
    const sent = await ok(relay.url, bob.api_key, 'message/send', {
      task_id: null,
      recipient: hooked.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'A webhook that fails' }] },
    });
    deadTaskId = sent.task_id as string;
    deadDeliveryId = await eventually(async () => {
      const response = await fetch(`${relay.url}/admin/deliveries?status=dead&task_id=${deadTaskId}`, { headers: admin });
      const deliveries = ((await response.json()) as { deliveries: Array<{ id: string }> }).deliveries;
      return deliveries.length === 1 ? deliveries[0].id : false;
    }, 30_000);
    sink.plan(path, [{ status: 200 }]);
  });

  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await relay?.stop();
    await provider?.stop();
    await sink?.stop();
  });

  it('a viewer sees the pages and the bodies, no control to change anything, and the API refuses every change with 403', async () => {
    const browser = await signInAs('vera', 'Vera Viewer');
    const { page } = browser;
    await shown(page.getByTestId('signed-in-role').getByText('viewer', { exact: true }));
    await checkPage(page, 'oidc-viewer-live');

    await page.goto(consoleUrl(`handoffs/${encodeURIComponent(taskId)}`));
    await shown(page.getByText(`Please review the ${word} refactor`).first());

    await openSection(page, 'Agents');
    await shown(page.getByRole('link', { name: bob.agent.handle }));
    expect(await page.getByRole('heading', { name: 'Register an agent' }).count()).toBe(0);

    await page.getByRole('link', { name: bob.agent.handle }).click();
    await shown(page.getByRole('heading', { name: 'Trust policy' }));
    await shown(page.getByRole('table', { name: `Keys of ${bob.agent.handle}` }));
    for (const name of [`Disable ${bob.agent.handle}`, 'New key', `Rotate ${bob.key.prefix}`, `Revoke ${bob.key.prefix}`, 'Save card', 'Apply policy']) {
      expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
    }
    await checkPage(page, 'oidc-viewer-agent');

    await openSection(page, 'Deliveries');
    await page.getByLabel('Task id').fill(deadTaskId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const dead = await shown(page.getByRole('table', { name: 'Dead letters, newest first' }));
    await shown(dead.getByRole('button', { name: `Show attempts of a2a.task.created to ${hookHandle}` }));
    expect(await page.getByRole('button', { name: /^Redeliver/ }).count()).toBe(0);

    const { cookie, csrf } = await sessionOf(browser);
    const handle = encodeURIComponent(bob.agent.handle);
    const changes: Array<[string, string, unknown?]> = [
      ['POST', '/admin/agents', { handle: uniqueHandle('new', 'acme'), name: 'New' }],
      ['PATCH', `/admin/agents/${handle}`, { role: 'backend' }],
      ['DELETE', `/admin/agents/${handle}`],
      ['POST', `/admin/agents/${handle}/keys`],
      ['DELETE', `/admin/agents/${handle}/keys/${bob.key.prefix}`],
      ['PUT', `/admin/agents/${handle}/trust`, { allow: ['*@acme'] }],
      ['POST', `/admin/agents/${handle}/webhook-secret`],
      ['POST', `/admin/deliveries/${deadDeliveryId}/redeliver`],
      ['POST', '/admin/deliveries/redeliver', { status: 'dead', task_id: deadTaskId }],
    ];
    const answers: Array<[string, number, string]> = [];
    for (const [method, path, body] of changes) {
      const response = await fetch(`${relay.url}${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': csrf, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      answers.push([`${method} ${path}`, response.status, ((await response.json()) as { error: { reason: string } }).error.reason]);
    }
    expect(answers).toEqual(changes.map(([method, path]) => [`${method} ${path}`, 403, 'role_forbidden']));
    const still = await (await fetch(`${relay.url}/admin/deliveries?status=dead&task_id=${deadTaskId}`, { headers: admin })).json();
    expect((still as { deliveries: unknown[] }).deliveries).toHaveLength(1);
  });

  it('an auditor sees handoffs with no message bodies, in the pages and in the API answers, and no search', async () => {
    const browser = await signInAs('aud', 'Aud Auditor');
    const { page } = browser;
    const row = page.getByRole('row').filter({ hasText: frank.agent.handle }).filter({ hasText: bob.agent.handle });
    await shown(row.first());
    expect(await page.content()).not.toContain(word);
    expect(await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Search' }).count()).toBe(0);
    await checkPage(page, 'oidc-auditor-live');

    await page.goto(consoleUrl(`handoffs/${encodeURIComponent(taskId)}`));
    await shown(page.getByRole('note').getByText(/not what the agents wrote/));
    await shown(page.getByText(bob.agent.handle).first());
    expect(await page.content()).not.toContain(word);
    await checkPage(page, 'oidc-auditor-handoff');

    const { cookie } = await sessionOf(browser);
    for (const path of [`/admin/tasks/${encodeURIComponent(taskId)}`, `/admin/tasks?agent=${encodeURIComponent(bob.agent.handle)}`]) {
      const response = await fetch(`${relay.url}${path}`, { headers: { cookie } });
      expect([path, response.status]).toEqual([path, 200]);
      expect(await response.text()).not.toContain(word);
    }
    const search = await fetch(`${relay.url}/admin/search?q=${word}`, { headers: { cookie } });
    expect(search.status).toBe(403);
  });

  it("an operator's redelivery from the console is in the audit log under their sub and email", async () => {
    const browser = await signInAs('otto', 'Otto Operator');
    const { page } = browser;
    await openSection(page, 'Deliveries');
    await page.getByLabel('Task id').fill(deadTaskId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('button', { name: `Redeliver a2a.task.created to ${hookHandle}` }).click();
    const dialog = await shown(page.getByRole('dialog', { name: 'Redeliver?' }));
    await dialog.getByRole('button', { name: 'Redeliver', exact: true }).click();
    await shown(page.getByRole('status').getByText(`Redelivering a2a.task.created to ${hookHandle}.`));
    const row = await eventually(async () => {
      const audit = (await (await fetch(`${relay.url}/admin/audit?limit=50`, { headers: admin })).json()) as {
        items: Array<{ action: string; target: string | null; actor: string; actor_sub: string | null; actor_email: string | null }>;
      };
      return audit.items.find((item) => item.action === 'delivery.redeliver' && item.target === deadDeliveryId) ?? false;
    }, 20_000);
    expect(row).toMatchObject({ actor: expect.stringMatching(/^console:[0-9a-f]{12}$/), actor_sub: 'otto', actor_email: 'otto@acme.test' });
  });
});
