import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import { SCREENSHOT_DIR, seriousAccessibilityViolations, shown, type ConsoleBrowser, signInToConsole } from './support/console-browser';
import { consoleOidcEnv, registerConsoleClient, startConsoleProvider } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/**
 * The console per org (docs/orgs.md#the-console), in a browser signed in through the identity
 * provider: people with roles in one of two orgs each see their roles, only their org's agents,
 * handoffs and held handoffs (another org's handoff page is not found), a handoff between the two
 * orgs in both, and a control to decide a held handoff only where their org's rule held it and
 * their role there is an approver's; every page is axe-clean.
 */
describe('console pages per org in a browser', () => {
  const suffix = randomUUID().slice(0, 6);
  const pay = `pay${suffix}`;
  const web = `web${suffix}`;
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let ana: RegisteredTestAgent;
  let ops: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  let wes: RegisteredTestAgent;
  const browsers: ConsoleBrowser[] = [];
  const consoleUrl = (path = ''): string => `${relay.url}/console/${path}`;
  const ids: Record<string, string> = {};
  const summaries = {
    payPlain: `Reconcile the ledger ${suffix}`,
    payHeld: `Raise the refund limit ${suffix}`,
    webPlain: `Fix the landing page ${suffix}`,
    webHeld: `Switch the CDN ${suffix}`,
    crossHeld: `Add a checkout button ${suffix}`,
  };
  const ofPay = [summaries.payPlain, summaries.payHeld, summaries.crossHeld];
  const ofWeb = [summaries.webPlain, summaries.webHeld, summaries.crossHeld];

  async function signInAs(login: string, name: string): Promise<Page> {
    const browser = await signInToConsole(consoleUrl(), provider.issuer, login, name);
    browsers.push(browser);
    return browser.page;
  }

  async function checkPage(page: Page, name: string): Promise<void> {
    expect([name, await seriousAccessibilityViolations(page)]).toEqual([name, []]);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  async function send(from: RegisteredTestAgent, to: RegisteredTestAgent, text: string, proposal: boolean): Promise<string> {
    const sent = await ok(relay.url, from.api_key, 'message/send', {
      recipient: to.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text }] },
      ...(proposal
        ? {
            intent: 'propose_action',
            proposed_action: { description: text, target_files: ['config/limits.yaml'], rationale: 'asked for by the team' },
          }
        : {}),
    });
    expect([text, sent.status.state]).toEqual([text, proposal ? 'held' : 'pending']);
    return sent.task_id as string;
  }

  /** The navigation's section `name`, opened, with its heading shown. */
  async function openSection(page: Page, name: string | RegExp, heading: string): Promise<void> {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name }).click();
    await shown(page.getByRole('heading', { level: 1, name: heading }));
  }

  /** Rows of `table` show every one of `mine` and none of `theirs` (the list is read once, so the first look answers for all). */
  async function listsOnly(page: Page, table: string, mine: string[], theirs: string[]): Promise<void> {
    const rows = page.getByRole('table', { name: table }).getByRole('row');
    for (const text of mine) await shown(rows.filter({ hasText: text }).first());
    for (const text of theirs) expect([text, await rows.filter({ hasText: text }).count()]).toEqual([text, 0]);
  }

  /** What `page`'s person sees of the orgs: their roles, and only their org's agents, handoffs and held handoffs. */
  async function seesOnlyTheirOrg(page: Page, who: string, roles: string[], own: { agents: string[]; handoffs: string[] }, other: typeof own): Promise<void> {
    const shownRoles = await shown(page.getByRole('list', { name: 'Your roles' }));
    expect(await shownRoles.getByRole('listitem').allTextContents()).toEqual(roles);
    await checkPage(page, `orgs-${who}-handoffs`);
    await listsOnly(page, 'Handoffs, newest first', own.handoffs, other.handoffs);

    await openSection(page, 'Agents', 'Agents');
    await listsOnly(page, 'Registered agents', own.agents, other.agents);
    await checkPage(page, `orgs-${who}-agents`);
  }

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    provider = await startConsoleProvider([
      { sub: 'pia', claims: { email: 'pia@pay.test', name: 'Pia Approver', agentrelay_role: `${pay}:approver` } },
      { sub: 'vic', claims: { email: 'vic@pay.test', name: 'Vic Viewer', agentrelay_role: [`${pay}:viewer`] } },
      { sub: 'walt', claims: { email: 'walt@web.test', name: 'Walt Approver', groups: ['web-approvers'] } },
      { sub: 'ada', claims: { email: 'ada@platform.test', name: 'Ada Admin', agentrelay_role: 'admin' } },
    ]);
    relay = await RelayHarness.start({
      env: {
        RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST),
        ...consoleOidcEnv(provider, { RELAY_CONSOLE_OIDC_GROUP_ROLES: JSON.stringify({ 'web-approvers': `${web}:approver` }) }),
      },
    });
    registerConsoleClient(provider, relay.url);
    ana = await registerAgent(relay, { handle: `ana@${pay}`, name: 'Ana' });
    ops = await registerAgent(relay, { handle: `ops@${pay}`, name: 'Ops' });
    frank = await registerAgent(relay, { handle: `frank@${web}`, name: 'Frank' });
    wes = await registerAgent(relay, { handle: `wes@${web}`, name: 'Wes' });
    for (const [recipient, rule] of [
      [ops, 'pay proposals'],
      [wes, 'web proposals'],
    ] as const) {
      await request(relay.url)
        .put(`/admin/agents/${recipient.agent.handle}/trust`)
        .set(admin)
        .send({ allow: [`*@${pay}`, `*@${web}`], hold: [{ name: rule, intents: ['propose_action'] }] })
        .expect(200);
    }
    ids.payPlain = await send(ana, ops, summaries.payPlain, false);
    ids.payHeld = await send(ana, ops, summaries.payHeld, true);
    ids.webPlain = await send(frank, wes, summaries.webPlain, false);
    ids.webHeld = await send(frank, wes, summaries.webHeld, true);
    // Held by ops's rule: payments decides it; both orgs read it.
    ids.crossHeld = await send(frank, ops, summaries.crossHeld, true);
    await request(relay.url)
      .put(`/admin/people/pat-${suffix}/roles`)
      .set(admin)
      .send({ roles: [`${pay}:auditor`] })
      .expect(200);
  });

  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await relay?.stop();
    await provider?.stop();
  });

  it("an approver of one org sees its roles and only its org's agents and handoffs; the other org's handoff is not found", async () => {
    const page = await signInAs('pia', 'Pia Approver');
    await seesOnlyTheirOrg(
      page,
      'pay-approver',
      [`${pay}: approver`],
      { agents: [ana.agent.handle, ops.agent.handle], handoffs: ofPay },
      { agents: [frank.agent.handle, wes.agent.handle], handoffs: [summaries.webPlain, summaries.webHeld] },
    );

    await page.goto(consoleUrl(`handoffs/${ids.webHeld}`));
    await shown(page.getByRole('heading', { level: 1, name: 'Handoff not found' }));
    expect(await page.getByText(summaries.webHeld).count()).toBe(0);
    await checkPage(page, 'orgs-pay-approver-other-handoff');
    await page.goto(consoleUrl(`handoffs/${ids.payPlain}`));
    await shown(page.getByRole('heading', { level: 1, name: summaries.payPlain }));
    await checkPage(page, 'orgs-pay-approver-handoff');
  });

  it("the approvals page shows an org's held handoffs, and the control to decide one where its org's rule held it", async () => {
    const page = await signInAs('pia', 'Pia Approver');
    await openSection(page, /^Approvals/, 'Approvals');
    await listsOnly(page, 'Handoffs held for approval, newest first', [summaries.payHeld, summaries.crossHeld], [summaries.webHeld]);
    await checkPage(page, 'orgs-pay-approver-approvals');
    for (const summary of [summaries.payHeld, summaries.crossHeld]) {
      await page.goto(consoleUrl(`approvals/${ids[summary === summaries.payHeld ? 'payHeld' : 'crossHeld']}`));
      await shown(page.getByRole('heading', { level: 1, name: summary }));
      await shown(page.getByRole('button', { name: 'Approve' }));
      await shown(page.getByRole('button', { name: 'Deny' }));
    }
    await checkPage(page, 'orgs-pay-approver-held');
  });

  it("an approver of the other org reads the handoff between the orgs but is offered no decision: the recipient's org decides it", async () => {
    const page = await signInAs('walt', 'Walt Approver');
    await seesOnlyTheirOrg(
      page,
      'web-approver',
      [`${web}: approver`],
      { agents: [frank.agent.handle, wes.agent.handle], handoffs: ofWeb },
      { agents: [ana.agent.handle, ops.agent.handle], handoffs: [summaries.payPlain, summaries.payHeld] },
    );
    await openSection(page, /^Approvals/, 'Approvals');
    await listsOnly(page, 'Handoffs held for approval, newest first', [summaries.webHeld, summaries.crossHeld], [summaries.payHeld]);
    await checkPage(page, 'orgs-web-approver-approvals');

    await page.goto(consoleUrl(`approvals/${ids.crossHeld}`));
    await shown(page.getByRole('heading', { level: 1, name: summaries.crossHeld }));
    await shown(
      page.getByTestId('decision-refused').getByText(`Only people with a role in ${pay}, whose rule held it, may decide this handoff: you have none there.`),
    );
    await shown(page.getByText(`Who may decide: A person with the approver role (or operator or admin) in ${pay} or relay-wide.`, { exact: true }));
    for (const name of ['Approve', 'Deny']) expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
    await checkPage(page, 'orgs-web-approver-cross-held');

    await page.goto(consoleUrl(`approvals/${ids.webHeld}`));
    await shown(page.getByRole('heading', { level: 1, name: summaries.webHeld }));
    await shown(page.getByRole('button', { name: 'Approve' }));

    await page.goto(consoleUrl(`approvals/${ids.payHeld}`));
    await shown(page.getByRole('heading', { level: 1, name: 'Held handoff not found' }));
    expect(await page.getByText(summaries.payHeld).count()).toBe(0);
  });

  it('a viewer of an org reads its held handoffs with no control to decide them, naming the org and the role', async () => {
    const page = await signInAs('vic', 'Vic Viewer');
    expect(await (await shown(page.getByRole('list', { name: 'Your roles' }))).getByRole('listitem').allTextContents()).toEqual([`${pay}: viewer`]);
    await openSection(page, /^Approvals/, 'Approvals');
    await listsOnly(page, 'Handoffs held for approval, newest first', [summaries.payHeld], [summaries.webHeld]);
    await page.goto(consoleUrl(`approvals/${ids.payHeld}`));
    await shown(page.getByRole('heading', { level: 1, name: summaries.payHeld }));
    await shown(
      page
        .getByTestId('decision-refused')
        .getByText(`Your role in ${pay} (viewer) may read held handoffs but not decide them: approving and denying need the approver role.`),
    );
    for (const name of ['Approve', 'Deny']) expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
    await checkPage(page, 'orgs-pay-viewer-held');

    // Nothing was decided: every held handoff is still held.
    await eventually(async () => {
      const held = await request(relay.url).get('/admin/approvals?limit=200').set(admin).expect(200);
      const listed = new Set((held.body.items as Array<{ id: string }>).map((row) => row.id));
      return [ids.payHeld, ids.webHeld, ids.crossHeld].every((id) => listed.has(id));
    }, 30_000);
  });

  /** The input labelled `label` in the form of the section headed `section`. */
  const inputOf = (page: Page, section: string, label: string) => page.getByRole('region', { name: section }).getByLabel(label, { exact: true });

  it('a relay-wide admin sees every org, creates one and edits quotas in the browser, with the relay’s refusal beside the field', async () => {
    const page = await signInAs('ada', 'Ada Admin');
    await openSection(page, 'Orgs', 'Orgs');
    await listsOnly(page, 'Orgs, by name', [pay, web], []);
    await checkPage(page, 'orgs-admin-orgs');

    const created = `new${suffix}`;
    await inputOf(page, 'Create an org', 'Name').fill(created);
    await inputOf(page, 'Create an org', 'Display name').fill('New team');
    await inputOf(page, 'Create an org', 'Agents quota').fill('5');
    await page.getByRole('button', { name: 'Create org' }).click();
    await shown(page.getByRole('heading', { level: 1, name: `New team (${created})` }));
    await eventually(async () => {
      const org = await request(relay.url).get(`/admin/orgs/${created}`).set(admin).expect(200);
      return org.body.display_name === 'New team' && org.body.quotas.agents === 5 && org.body.origin === 'admin';
    }, 30_000);

    // A name the relay refuses: its reason shows beside the name.
    await openSection(page, 'Orgs', 'Orgs');
    await inputOf(page, 'Create an org', 'Name').fill(created);
    await page.getByRole('button', { name: 'Create org' }).click();
    await shown(page.getByTestId('error-name').getByText(`The org ${created} already exists`));
    await expect(inputOf(page, 'Create an org', 'Name').getAttribute('aria-invalid')).resolves.toBe('true');

    // Defaults and chain bounds are set through the API; the org's page shows them.
    await request(relay.url)
      .patch(`/admin/orgs/${pay}`)
      .set(admin)
      .send({
        defaults: { trust: { allow: [`*@${web}`], hold: [{ name: 'outsiders', outside_org: true }] } },
        chain: { max_depth: 4, pair_per_minute: 20 },
      })
      .expect(200);
    await page.goto(consoleUrl(`orgs/${pay}`));
    await shown(page.getByRole('heading', { level: 1, name: pay }));
    const defaults = page.getByRole('region', { name: 'Defaults' });
    await shown(defaults.getByTestId('org-default-trust').getByText(`"*@${web}"`));
    await shown(defaults.getByRole('definition').filter({ hasText: /^4$/ }));
    await inputOf(page, 'Display name and quotas', 'Requests per minute quota').fill('0');
    await page.getByRole('button', { name: 'Save' }).click();
    const refusal = await shown(page.getByTestId('error-requests_per_minute'));
    expect(await refusal.textContent()).toContain('requests_per_minute must not be less than 1');
    expect((await request(relay.url).get(`/admin/orgs/${pay}`).set(admin).expect(200)).body.quotas.requests_per_minute).toBeNull();

    await inputOf(page, 'Display name and quotas', 'Display name').fill('Payments');
    await inputOf(page, 'Display name and quotas', 'Requests per minute quota').fill('6000');
    await inputOf(page, 'Display name and quotas', 'Open handoffs quota').fill('500');
    await page.getByRole('button', { name: 'Save' }).click();
    await shown(page.getByRole('region', { name: 'Display name and quotas' }).getByRole('status').getByText('Saved.'));
    await eventually(async () => {
      const org = await request(relay.url).get(`/admin/orgs/${pay}`).set(admin).expect(200);
      return org.body.display_name === 'Payments' && org.body.quotas.requests_per_minute === 6000 && org.body.quotas.open_handoffs === 500;
    }, 30_000);
    await shown(page.getByRole('heading', { level: 1, name: `Payments (${pay})` }));
    await listsOnly(page, `Agents of ${pay}`, [ana.agent.handle, ops.agent.handle], [frank.agent.handle]);
    await listsOnly(page, `People given roles in ${pay}`, [`pat-${suffix}`], []);
    await checkPage(page, 'orgs-admin-org');
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'console-org.png'), fullPage: true });

    await page
      .getByRole('table', { name: `Agents of ${pay}` })
      .getByRole('link', { name: ana.agent.handle })
      .click();
    await shown(page.getByRole('heading', { level: 1, name: `Ana (${ana.agent.handle})` }));
  });

  it('a relay-wide admin filters handoffs, search and agents by one org', async () => {
    const page = await signInAs('ada', 'Ada Admin');
    const handoffFilters = page.getByRole('search', { name: 'Filter handoffs' });
    await handoffFilters.getByLabel('Org', { exact: true }).fill(web);
    await handoffFilters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL((url) => url.searchParams.get('org') === web);
    await listsOnly(page, 'Handoffs, newest first', ofWeb, [summaries.payPlain, summaries.payHeld]);
    await checkPage(page, 'orgs-admin-handoffs-of-web');

    // Search within one org: a handoff of the other is not found there, and is in its own.
    await page.goto(consoleUrl(`search?q=landing&org=${pay}`));
    await shown(page.getByRole('heading', { level: 2, name: 'No handoff matches “landing”' }));
    await page.goto(consoleUrl(`search?q=landing&org=${web}`));
    await shown(page.getByRole('region', { name: /Handoffs matching/ }).getByRole('link', { name: summaries.webPlain }));

    await openSection(page, 'Agents', 'Agents');
    const agentFilters = page.getByRole('search', { name: 'Filter agents' });
    await agentFilters.getByLabel('Org', { exact: true }).fill(pay);
    await agentFilters.getByRole('button', { name: 'Apply filter' }).click();
    await listsOnly(page, `Registered agents of ${pay}`, [ana.agent.handle, ops.agent.handle], [frank.agent.handle, wes.agent.handle]);
    await checkPage(page, 'orgs-admin-agents-of-pay');
  });

  it('a person of one org sees only their org, may not create or change it, and another org is not found', async () => {
    const page = await signInAs('pia', 'Pia Approver');
    // One org: nothing to filter by.
    await shown(page.getByRole('search', { name: 'Filter handoffs' }));
    expect(await page.getByLabel('Org', { exact: true }).count()).toBe(0);
    await openSection(page, 'Orgs', 'Orgs');
    await listsOnly(page, 'Orgs, by name', [pay], [web]);
    await shown(page.getByTestId('create-org-refused').getByText(`Creating an org needs the admin role relay-wide; your roles are ${pay}: approver.`));
    expect(await page.getByRole('button', { name: 'Create org' }).count()).toBe(0);
    await checkPage(page, 'orgs-pay-approver-orgs');

    await page.getByRole('table', { name: 'Orgs, by name' }).getByRole('link', { name: pay }).click();
    await shown(page.getByRole('heading', { level: 1, name: new RegExp(`\\(${pay}\\)$`) }));
    await shown(page.getByTestId('org-edit-refused').getByText(`Changing an org needs the admin role relay-wide; your roles are ${pay}: approver.`));
    await expect(inputOf(page, 'Display name and quotas', 'Agents quota').isDisabled()).resolves.toBe(true);
    expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
    await listsOnly(page, `Agents of ${pay}`, [ana.agent.handle, ops.agent.handle], [frank.agent.handle, wes.agent.handle]);
    await checkPage(page, 'orgs-pay-approver-org');

    await page.goto(consoleUrl(`orgs/${web}`));
    await shown(page.getByRole('heading', { level: 1, name: 'Org not found' }));
    expect(await page.getByText(wes.agent.handle).count()).toBe(0);
    await checkPage(page, 'orgs-pay-approver-other-org');
    await page.goto(consoleUrl(`orgs/nosuch${suffix}`));
    await shown(page.getByRole('heading', { level: 1, name: 'Org not found' }));
  });
});
