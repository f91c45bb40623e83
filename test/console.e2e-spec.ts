import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import { openConsoleBrowser, SCREENSHOT_DIR, searchableWord, seriousAccessibilityViolations, shown, type ConsoleBrowser } from './support/console-browser';
import { eventually } from './support/eventually';
import { ok, rpc } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { WebhookSink } from './support/webhook-sink';

const DIFF = [
  '--- a/src/api/users.ts',
  '+++ b/src/api/users.ts',
  '@@ -1,2 +1,2 @@',
  ' import { db } from "./db";',
  '-export const users = [];',
  '+export const users = { items: [], next_cursor: null };',
  '',
].join('\n');

describe('operator console in a browser', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let browser: ConsoleBrowser;
  let page: Page;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  const word = searchableWord('quokka');
  const summary = `Refactored the users API (${word})`;
  let taskId: string;

  const consoleUrl = (path = ''): string => `${relay.url}/console/${path}`;

  /** An admin API call as the browser's session would make it: the cookie, and the CSRF header when given. */
  async function admin(method: string, path: string, init: { cookie: string; csrf?: string }): Promise<Response> {
    const headers: Record<string, string> = { cookie: init.cookie };
    if (init.csrf) headers['x-csrf-token'] = init.csrf;
    return fetch(`${relay.url}${path}`, { method, headers });
  }

  async function sessionCookie(): Promise<string> {
    const cookie = (await browser.context.cookies(relay.url + '/admin/')).find((entry) => entry.name === 'relay_session');
    if (!cookie) throw new Error('the browser holds no relay_session cookie');
    return `${cookie.name}=${cookie.value}`;
  }

  /** The page passes axe's serious and critical rules, and its picture is kept. */
  async function checkPage(name: string): Promise<void> {
    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  async function openSection(name: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name }).click();
    await shown(page.getByRole('heading', { level: 1, name }));
  }

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({
      env: {
        RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST),
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms',
        RELAY_WEBHOOK_TIMEOUT_MS: '2000',
      },
    });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'acme'), name: 'Frank' });
    browser = await openConsoleBrowser();
    page = browser.page;
  });

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await sink?.stop();
  });

  it('signs in with the admin token, which the browser does not keep', async () => {
    await page.goto(consoleUrl());
    const token = await shown(page.getByLabel('Admin token'));
    await checkPage('sign-in');
    expect(await page.title()).toBe('Sign in · AgentRelay console');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');

    await token.fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await shown(page.getByRole('alert').getByText('That admin token is not valid.'));

    await token.fill(TEST_ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await shown(page.getByRole('heading', { level: 1, name: 'Live handoffs' }));
    expect(await page.title()).toBe('Live handoffs · AgentRelay console');

    const stored = await page.evaluate<string>('JSON.stringify({ local: { ...localStorage }, session: { ...sessionStorage }, cookies: document.cookie })');
    expect(stored).not.toContain(TEST_ADMIN_TOKEN);
    const cookies = await browser.context.cookies(relay.url + '/admin/');
    expect(cookies).toEqual([expect.objectContaining({ name: 'relay_session', httpOnly: true, sameSite: 'Strict', path: '/admin' })]);
    expect(cookies[0].value).not.toContain(TEST_ADMIN_TOKEN);
  });

  it('shows a handoff sent through the public API within 5 s, without a reload, and its state changes live', async () => {
    await shown(page.getByRole('status').getByText(/^Live:/));
    // A mark in the page's memory: it is gone if the page reloads.
    await page.evaluate(() => Object.assign(globalThis, { consoleTestMark: 'still here' }));

    const created = await ok(relay.url, bob.api_key, 'message/send', {
      task_id: null,
      recipient: frank.agent.handle,
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'text', text: summary }] },
      artifacts: [{ type: 'file_diff', path: 'src/api/users.ts', diff: DIFF }],
    });
    taskId = created.task_id as string;
    const row = page.getByRole('row').filter({ hasText: summary });
    await shown(row.getByText('Pending', { exact: true }), 5_000);

    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await shown(row.getByText('Accepted', { exact: true }));
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Client reads items and next_cursor.' });
    await shown(row.getByText('Completed', { exact: true }));

    const question = `Does the client read next_cursor? (${word})`;
    await ok(relay.url, frank.api_key, 'message/send', {
      task_id: null,
      recipient: bob.agent.handle,
      intent: 'ask_question',
      message: { role: 'user', parts: [{ type: 'text', text: question }] },
    });
    await shown(page.getByRole('row').filter({ hasText: question }).getByText('Pending', { exact: true }), 5_000);
    const table = page.getByRole('table', { name: 'Handoffs, newest first' });
    const summaries = await table.getByRole('row').filter({ hasText: word }).allInnerTexts();
    expect(summaries.map((text) => (text.includes(question) ? 'question' : 'refactor'))).toEqual(['question', 'refactor']);

    expect(await page.evaluate(() => (globalThis as { consoleTestMark?: string }).consoleTestMark)).toBe('still here');
    expect(await row.getByText(`${bob.agent.handle} → ${frank.agent.handle}`).count()).toBe(1);
    await checkPage('live');
  });

  it("shows a handoff's timeline in order, its diff artifact as a diff, its deliveries and audit rows", async () => {
    await page.getByRole('link', { name: summary }).click();
    await shown(page.getByRole('heading', { level: 1, name: summary }));
    expect(await page.title()).toBe(`Handoff: ${summary} · AgentRelay console`);
    expect(page.url()).toBe(consoleUrl(`handoffs/${taskId}`));

    const events = page.getByRole('list', { name: 'Events, oldest first' }).getByRole('article');
    await shown(events.filter({ hasText: 'Completed' }));
    const labels = await events.evaluateAll((articles) => articles.map((article) => article.getAttribute('aria-label')));
    const order = ['Created by', 'Accepted by', 'Completed by'].map((start) => labels.findIndex((label) => label?.startsWith(start)));
    expect(order.every((index) => index >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(labels[order[0]]).toBe(`Created by ${bob.agent.handle}`);
    expect(labels[order[2]]).toBe(`Completed by ${frank.agent.handle}`);

    const diff = await shown(page.getByRole('figure', { name: 'Diff of src/api/users.ts' }).first());
    const added = diff.getByText('+export const users = { items: [], next_cursor: null };', { exact: true });
    const removed = diff.getByText('-export const users = [];', { exact: true });
    const colours = await Promise.all(
      [added, removed, diff.getByText(' import { db } from "./db";', { exact: true })].map((line) =>
        line.evaluate((element) => element.ownerDocument.defaultView?.getComputedStyle(element).backgroundColor),
      ),
    );
    // The stylesheet (served under style-src 'self') colours added and removed lines, and not context.
    expect(new Set(colours).size).toBe(3);

    await shown(page.getByRole('heading', { level: 2, name: 'Deliveries' }));
    const audit = await shown(page.getByRole('table', { name: 'Audit rows, oldest first' }));
    expect(await audit.getByRole('row').count()).toBeGreaterThanOrEqual(3);
    await checkPage('handoff');
  });

  it('finds the handoff by a word of its text, with the word marked', async () => {
    await openSection('Search');
    await page.getByLabel('Words').fill(word);
    await page.getByLabel('Words').press('Enter');
    const hit = await shown(page.getByRole('article', { name: summary }));
    const marked = hit.getByText(word, { exact: true }).first();
    expect(await marked.evaluate((element) => element.tagName)).toBe('MARK');
    expect(page.url()).toContain(`q=${word}`);
    await checkPage('search');
  });

  it('registers an agent whose key, shown once, calls the API until it is revoked (then 401)', async () => {
    await openSection('Agents');
    const handle = uniqueHandle('ivy', 'acme');
    const form = page.getByRole('region', { name: 'Register an agent' });
    await form.getByLabel('Handle').fill(handle);
    await form.getByLabel('Name', { exact: true }).fill('Ivy');
    await form.getByRole('button', { name: 'Register' }).click();
    const key = await (await shown(page.getByLabel('API key', { exact: true }))).inputValue();
    expect(key).toMatch(/^ah_live_/);
    await shown(page.getByLabel('Webhook secret'));
    await shown(page.getByRole('button', { name: 'Copy api key' }));
    await checkPage('agent-registered');

    const listed = await rpc(relay.url, key, 'tasks/list', { filter: { role: 'recipient' } });
    expect(listed.status).toBe(200);
    expect(listed.body.result).toBeDefined();

    await page.getByRole('button', { name: 'I have copied them' }).click();
    await page.getByRole('link', { name: handle }).click();
    await shown(page.getByRole('heading', { level: 1, name: `Ivy (${handle})` }));
    const prefix = key.slice(0, 'ah_live_'.length + 8);
    await page.getByRole('button', { name: `Revoke ${prefix}` }).click();
    const dialog = await shown(page.getByRole('dialog', { name: `Revoke ${prefix}?` }));
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await shown(
      page
        .getByRole('table', { name: `Keys of ${handle}` })
        .getByRole('row')
        .filter({ hasText: prefix })
        .getByText('Revoked'),
    );

    await eventually(async () => expect((await rpc(relay.url, key, 'tasks/list', { filter: { role: 'recipient' } })).status).toBe(401), 10_000);
    await checkPage('agent');
  });

  it("rotates an agent's key: the new key, shown once, works and the old one is refused (401)", async () => {
    await page.goto(consoleUrl(`agents/${encodeURIComponent(frank.agent.handle)}`));
    const oldPrefix = frank.key.prefix;
    await (await shown(page.getByRole('button', { name: `Rotate ${oldPrefix}` }))).click();
    const dialog = await shown(page.getByRole('dialog', { name: `Rotate ${oldPrefix}?` }));
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    const newKey = await (await shown(page.getByLabel('New API key'))).inputValue();
    expect(newKey).toMatch(/^ah_live_/);
    const keys = page.getByRole('table', { name: `Keys of ${frank.agent.handle}` });
    await shown(keys.getByRole('row').filter({ hasText: oldPrefix }).getByText('Revoked'));
    await shown(
      keys
        .getByRole('row')
        .filter({ hasText: newKey.slice(0, 'ah_live_'.length + 8) })
        .getByText('Active', { exact: true }),
    );

    await eventually(async () => expect((await rpc(relay.url, frank.api_key, 'tasks/list', { filter: { role: 'recipient' } })).status).toBe(401), 10_000);
    expect((await rpc(relay.url, newKey, 'tasks/list', { filter: { role: 'recipient' } })).status).toBe(200);
  });

  it("edits an agent's trust policy: a YAML error is shown at its line, then a valid policy applies", async () => {
    await page.goto(consoleUrl(`agents/${encodeURIComponent(frank.agent.handle)}`));
    const editor = await shown(page.getByLabel('Policy (YAML)'));
    await editor.fill('allow:\n  - "*@acme"\nallow:\n  - eve@other\n');
    await page.getByRole('button', { name: 'Apply policy' }).click();
    const error = await shown(page.getByRole('alert').filter({ hasText: 'Line 3, column 1' }));
    await shown(error.getByLabel('Line 3 of the policy'));
    expect(await editor.getAttribute('aria-invalid')).toBe('true');
    await checkPage('agent-trust-error');

    // Well-formed YAML that the relay refuses: its reason is shown.
    await editor.fill('allow:\n  - not a handle\n');
    await page.getByRole('button', { name: 'Apply policy' }).click();
    await shown(page.getByRole('alert').filter({ hasText: 'each entry must be a handle' }));

    await editor.fill('allow:\n  - "*@acme"\nblock:\n  - eve@acme\n');
    await page.getByRole('button', { name: 'Apply policy' }).click();
    await shown(page.getByRole('status').getByText('Trust policy applied.'));
    const policy = (await (
      await fetch(`${relay.url}/admin/agents/${encodeURIComponent(frank.agent.handle)}/trust`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })
    ).json()) as {
      allow: string[];
      block: string[];
    };
    expect(policy).toMatchObject({ allow: ['*@acme'], block: ['eve@acme'] });
  });

  it('redelivers a dead-lettered webhook from the Deliveries page, and it reaches its sink', async () => {
    const hookHandle = uniqueHandle('hook', 'acme');
    const path = `/${hookHandle}/hook`;
    sink.plan(path, [{ status: 500 }]);
    const hooked = await registerAgent(relay, { handle: hookHandle, name: 'Hook', notification_webhook_url: sink.url(path) });
    const sent = await ok(relay.url, bob.api_key, 'message/send', {
      task_id: null,
      recipient: hooked.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'Webhook that fails' }] },
    });
    const deadTaskId = sent.task_id as string;
    await eventually(async () => {
      const response = await fetch(`${relay.url}/admin/deliveries?status=dead&task_id=${deadTaskId}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(((await response.json()) as { deliveries: unknown[] }).deliveries).toHaveLength(1);
    }, 30_000);
    const failedAttempts = sink.to(path).length;
    sink.plan(path, [{ status: 200 }]);

    await openSection('Deliveries');
    await page.getByLabel('Task id').fill(deadTaskId);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const dead = page.getByRole('table', { name: 'Dead letters, newest first' });
    await page.getByRole('button', { name: `Redeliver a2a.task.created to ${hookHandle}` }).click();
    const dialog = await shown(page.getByRole('dialog', { name: 'Redeliver?' }));
    await checkPage('deliveries-confirm');
    await dialog.getByRole('button', { name: 'Redeliver', exact: true }).click();
    await shown(page.getByRole('status').getByText(`Redelivering a2a.task.created to ${hookHandle}.`));

    await eventually(
      () =>
        expect(
          sink
            .to(path)
            .slice(failedAttempts)
            .map((request) => request.status),
        ).toContain(200),
      30_000,
    );
    await dead.waitFor({ state: 'detached' });
    await checkPage('deliveries');
  });

  it('shows the overview: throughput of the last hour, open handoffs, delivery failures and outbox lag', async () => {
    await openSection('Overview');
    await shown(page.getByRole('img', { name: /Handoffs created and completed per minute, last hour/ }));
    await shown(page.getByRole('heading', { level: 2, name: 'Open handoffs' }));
    await shown(page.getByRole('heading', { level: 2, name: 'Outbox lag' }));
    await checkPage('overview');
  });

  it("approves a held handoff signed in with the admin token: the handoff's page names the admin token's console session, the rule and the comment", async () => {
    const ops = await registerAgent(relay, { handle: uniqueHandle('ops', 'acme'), name: 'Ops' });
    const trust = await fetch(`${relay.url}/admin/agents/${encodeURIComponent(ops.agent.handle)}/trust`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ allow: [bob.agent.handle], hold: [{ name: 'every notice', intents: ['inform'] }] }),
    });
    expect(trust.status).toBe(200);
    const held = await ok(relay.url, bob.api_key, 'message/send', {
      task_id: null,
      recipient: ops.agent.handle,
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'text', text: 'The nightly export moved to 02:00' }] },
    });
    expect(held.status.state).toBe('held');
    const { session } = (await (await admin('GET', '/admin/session', { cookie: await sessionCookie() })).json()) as { session: string };

    await page.goto(consoleUrl(`approvals/${encodeURIComponent(held.task_id as string)}`));
    await page.getByLabel('Comment').fill('expected change');
    await page.getByRole('button', { name: 'Approve' }).click();
    await (await shown(page.getByRole('dialog', { name: 'Approve this handoff?' }))).getByRole('button', { name: 'Approve', exact: true }).click();
    await shown(page.getByTestId('decision-result'));
    await page.getByRole('link', { name: 'Open as a handoff' }).click();
    const approver = `the admin token (console session ${session})`;
    await shown(page.getByTestId('hold-decided-by').getByText(approver, { exact: true }));
    const timeline = await shown(page.getByRole('list', { name: 'Events, oldest first' }));
    const approved = await shown(timeline.getByRole('article', { name: `Approved and delivered by ${approver}` }));
    await shown(approved.getByText(`Under the rule "every notice" of ${ops.agent.handle}'s trust policy.`, { exact: true }));
    await shown(approved.getByText('Comment: expected change', { exact: true }));
    expect(await page.getByRole('article', { name: /^Created by console:/ }).count()).toBe(0);
    await checkPage('handoff-approved-with-admin-token');
  });

  it('refuses a change made with the session cookie but without its CSRF token (403)', async () => {
    const cookie = await sessionCookie();
    const session = await admin('GET', '/admin/session', { cookie });
    expect(session.status).toBe(200);
    const { csrf_token: csrfToken } = (await session.json()) as { csrf_token: string };
    const keysPath = `/admin/agents/${encodeURIComponent(bob.agent.handle)}/keys`;

    const withoutToken = await admin('POST', keysPath, { cookie });
    expect(withoutToken.status).toBe(403);
    expect(await withoutToken.json()).toMatchObject({ error: { reason: 'csrf_failed' } });
    expect((await admin('POST', keysPath, { cookie, csrf: 'not-the-token' })).status).toBe(403);
    const keysOf = async () => ((await (await admin('GET', keysPath, { cookie })).json()) as { items: unknown[] }).items;
    expect(await keysOf()).toHaveLength(1);

    // The same change with the session's token goes through.
    expect((await admin('POST', keysPath, { cookie, csrf: csrfToken })).status).toBe(201);
    expect(await keysOf()).toHaveLength(2);
  });

  it('signs out: the session cookie no longer works', async () => {
    const cookie = await sessionCookie();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await shown(page.getByLabel('Admin token'));
    expect((await admin('GET', '/admin/session', { cookie })).status).toBe(401);
    expect((await admin('GET', '/admin/agents', { cookie })).status).toBe(401);
  });

  it('ran every page without a Content-Security-Policy refusal', () => {
    expect(browser.consoleErrors.filter((message) => /Content Security Policy/i.test(message))).toEqual([]);
  });
});
