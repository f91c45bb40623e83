import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import request from 'supertest';
import type { DeliveryView } from '@app/contracts';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import { SCREENSHOT_DIR, seriousAccessibilityViolations, shown, type ConsoleBrowser, signInToConsole, consoleSessionHeaders } from './support/console-browser';
import { consoleOidcEnv, registerConsoleClient, startConsoleProvider } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok, rpc, type Json } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const DIFF = ['--- a/db/migrations/042.sql', '+++ b/db/migrations/042.sql', '@@ -1 +1,2 @@', ' -- users', '+ALTER TABLE users ADD COLUMN plan text;', ''].join(
  '\n',
);

/**
 * The approvals queue in a browser (docs/operations.md#approvals), signed in through the
 * organisation's identity provider: a hold rule keeps a propose_action from another org; its
 * recipient sees nothing of it (A2A GetTask, the list, its live inbox, its webhook) until an
 * operator approves it in the console, then gets it once; a viewer reads it with no control and the
 * API refuses it 403; four eyes keeps the sending agent's owner from deciding; the audit names the
 * approver, and so does the handoff's page (with the rule and the comment); the relay, not the
 * sender, is named as holding it; the decision comes after the diff it decides; the pages are axe-clean.
 */
describe('console approvals in a browser', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let sink: WebhookSink;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let inbox: SseStream;
  let taskId: string;
  const browsers: ConsoleBrowser[] = [];
  const suffix = randomUUID().slice(0, 6);
  const consoleUrl = (path = ''): string => `${relay.url}/console/${path}`;
  const summary = `Please add the plan column ${suffix}`;

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

  /** From the navigation (with its count of held handoffs) to the queue, and from its row to the held handoff's page. */
  async function openHeldHandoff(page: Page, screenshot: string): Promise<void> {
    const entry = page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: /^Approvals/ });
    await shown(entry.getByTestId('held-count'));
    await entry.click();
    await shown(page.getByRole('heading', { level: 1, name: 'Approvals' }));
    const row = await shown(page.getByRole('table', { name: 'Handoffs held for approval, newest first' }).getByRole('row').filter({ hasText: summary }));
    for (const text of [bob.agent.handle, ops.agent.handle, 'Proposed action', 'external proposals (four eyes)']) await shown(row.getByText(text));
    await checkPage(page, `${screenshot}-queue`);
    await row.getByRole('link', { name: summary }).click();
    await shown(page.getByRole('heading', { level: 1, name: summary }));
    await shown(page.getByRole('figure', { name: 'Diff of db/migrations/042.sql' }).getByText('+ALTER TABLE users ADD COLUMN plan text;'));
    await shown(page.getByTestId('hold-outcome').getByText('Waiting for a decision'));
    await shown(page.getByRole('heading', { name: 'Proposed action' }));
    // The relay held it, under the recipient's rule: the sender only sent it.
    await shown(page.getByTestId('hold-held-by').getByText(heldBy(), { exact: true }));
    const held = await shown(page.getByRole('list', { name: 'Events, oldest first' }).getByRole('article', { name: 'Held for approval by the relay' }));
    await shown(held.getByText(heldBy(), { exact: true }));
    await shown(held.getByText(/^Who may decide: A person with the approver role .*not the owner of/));
    expect(await page.getByRole('article', { name: `Held for approval by ${bob.agent.handle}` }).count()).toBe(0);
    // What is decided comes first, then the decision (or why this person may not decide).
    const decisionFollowsDiff = await page.getByRole('figure', { name: 'Diff of db/migrations/042.sql' }).evaluate((figure) => {
      const decision = figure.ownerDocument.getElementById('decision');
      const following = 4; // Node.DOCUMENT_POSITION_FOLLOWING
      return decision !== null && decision.textContent !== '' && (figure.compareDocumentPosition(decision) & following) !== 0;
    });
    expect(decisionFollowsDiff).toBe(true);
  }

  const heldBy = (): string => `The relay held it under the rule "external proposals" of ${ops.agent.handle}'s trust policy; ${bob.agent.handle} sent it.`;

  const ofTask = (path: string): Json[] =>
    sink
      .to(path)
      .map((entry) => JSON.parse(entry.body) as Json)
      .filter((body) => body.data?.task_id === taskId);

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    sink = await WebhookSink.start();
    provider = await startConsoleProvider([
      { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
      { sub: 'owen', claims: { email: 'owen@partner.test', name: 'Owen Owner', agentrelay_role: 'approver' } },
      { sub: 'otto', claims: { email: 'otto@acme.test', name: 'Otto Operator', groups: ['relay-ops'] } },
    ]);
    relay = await RelayHarness.start({
      env: {
        RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST),
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        ...consoleOidcEnv(provider, { RELAY_CONSOLE_OIDC_GROUP_ROLES: JSON.stringify({ 'relay-ops': 'operator' }) }),
      },
    });
    registerConsoleClient(provider, relay.url);
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops', notification_webhook_url: sink.url('/ops') });
    bob = await registerAgent(relay, { handle: `bob@partner${suffix}`, name: 'Bob', email: 'owen@partner.test', owner: { subject: 'owen' } });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ allow: [`*@partner${suffix}`], hold: [{ name: 'external proposals', outside_org: true, intents: ['propose_action'], four_eyes: true }] })
      .expect(200);
    inbox = await openSse(`${relay.url}/a2a`, { authorization: `Bearer ${ops.api_key}` }, { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} });
    expect((await inbox.next())?.data.result).toEqual({ event: 'ready' });
    const sent = await ok(relay.url, bob.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: summary }] },
      intent: 'propose_action',
      proposed_action: { description: 'add the plan column', target_files: ['db/migrations/042.sql'], rationale: 'billing needs it' },
      artifacts: [{ type: 'file_diff', path: 'db/migrations/042.sql', diff: DIFF }],
    });
    expect(sent.status.state).toBe('held');
    taskId = sent.task_id as string;
  });

  afterAll(async () => {
    inbox?.close();
    for (const browser of browsers) await browser.close();
    await relay?.stop();
    await provider?.stop();
    await sink?.stop();
  });

  it('while held, the recipient sees nothing of it: A2A GetTask, the list, its webhook', async () => {
    const a2aGet = await rpc(relay.url, ops.api_key, 'tasks/get', { id: taskId });
    expect(a2aGet.body.error).toMatchObject({ code: -32001 });
    const listed = await ok(relay.url, ops.api_key, 'tasks/list', {});
    expect(JSON.stringify(listed)).not.toContain(taskId);
    expect(ofTask('/ops')).toEqual([]);
  });

  it('a viewer reads the queue and the held handoff with no control to decide it; the API refuses a decision with 403', async () => {
    const browser = await signInAs('vera', 'Vera Viewer');
    const { page } = browser;
    await openHeldHandoff(page, 'approvals-viewer');
    await shown(page.getByTestId('decision-refused').getByText(/Your role \(viewer\) may read held handoffs but not decide them/));
    for (const name of ['Approve', 'Deny']) expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
    await checkPage(page, 'approvals-viewer-held');
    const session = await sessionOf(browser);
    for (const decision of ['approve', 'deny']) {
      const refused = await request(relay.url).post(`/admin/approvals/${taskId}/${decision}`).set(session).send({ comment: 'looks fine' });
      expect([decision, refused.status, refused.body.error.reason]).toEqual([decision, 403, 'role_forbidden']);
    }
  });

  it("four eyes: the sending agent's owner is offered no control, and the API refuses them with the reason", async () => {
    const browser = await signInAs('owen', 'Owen Owner');
    const { page } = browser;
    await openHeldHandoff(page, 'approvals-owner');
    await shown(
      page
        .getByTestId('decision-refused')
        .getByText(`you own ${bob.agent.handle}, the sending agent, so another person must decide this handoff`, { exact: false }),
    );
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    const refused = await request(relay.url)
      .post(`/admin/approvals/${taskId}/approve`)
      .set(await sessionOf(browser))
      .send({});
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ reason: 'four_eyes', message: expect.stringContaining(`You own ${bob.agent.handle}`) });
    expect((await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId })).status.state).toBe('held');
  });

  it('an operator approves it in the console; the recipient then gets it exactly once; the audit names the approver', async () => {
    const browser = await signInAs('otto', 'Otto Operator');
    const { page } = browser;
    await openHeldHandoff(page, 'approvals-operator');
    await checkPage(page, 'approvals-operator-held');

    // From the top, the skip link leads the keyboard to the decision: the next Tab is its comment.
    await page.getByRole('link', { name: 'Skip to the decision' }).click();
    await page.keyboard.press('Tab');
    expect(await page.locator('#decision textarea').evaluate((textarea) => textarea === textarea.ownerDocument.activeElement)).toBe(true);

    // A deny needs a reason.
    await page.getByRole('button', { name: 'Deny' }).click();
    await shown(page.getByRole('alert').getByText('Give a reason to deny this handoff.'));
    expect(await page.getByRole('dialog').count()).toBe(0);

    await page.getByLabel('Comment').fill('checked the migration');
    await page.getByRole('button', { name: 'Approve' }).click();
    const dialog = await shown(page.getByRole('dialog', { name: 'Approve this handoff?' }));
    await shown(dialog.getByText(`It is delivered to ${ops.agent.handle} at once, as if just sent.`));
    await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
    await shown(page.getByTestId('decision-result').getByText(`Approved: delivered to ${ops.agent.handle} as if just sent.`));
    await shown(page.getByTestId('hold-outcome').getByText(/^Approved/));
    await checkPage(page, 'approvals-operator-approved');

    // The recipient: its live inbox's first event of the task is `created`, its webhook fires, once.
    let first: SseEvent | undefined;
    while (!first) {
      const event = await inbox.next();
      if (!event) throw new Error('the inbox stream ended');
      if (event.data.result?.task_id === taskId) first = event;
    }
    expect(first.data.result).toMatchObject({ event: 'created', task_id: taskId, status: { state: 'pending' } });
    const delivered = await eventually(async () => {
      const listed = (await request(relay.url).get(`/admin/deliveries?task_id=${taskId}`).set(admin)).body.deliveries as DeliveryView[];
      return listed.some((delivery) => delivery.status === 'succeeded') ? listed : false;
    }, 30_000);
    expect(delivered.map((delivery) => [delivery.channel, delivery.target_handle, delivery.event, delivery.status])).toEqual([
      ['webhook', ops.agent.handle, 'a2a.task.created', 'succeeded'],
    ]);
    expect(ofTask('/ops').map((body) => body.type)).toEqual(['a2a.task.created']);
    expect(await ok(relay.url, ops.api_key, 'tasks/get', { task_id: taskId })).toMatchObject({ status: { state: 'pending' }, intent: 'propose_action' });
    const a2a = await ok(relay.url, ops.api_key, 'tasks/get', { id: taskId });
    expect(a2a.status.state).toBe('submitted');

    // Approving again is refused: it is no longer held.
    const again = await request(relay.url)
      .post(`/admin/approvals/${taskId}/approve`)
      .set(await sessionOf(browser))
      .send({});
    expect([again.status, again.body.error.reason]).toEqual([409, 'not_held']);

    const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
    expect(audit.body.items.find((row: Json) => row.action === 'approval.approve' && row.target === taskId)).toMatchObject({
      actor_sub: 'otto',
      actor_email: 'otto@acme.test',
      detail: { rule: 'external proposals', comment: 'checked the migration' },
    });
    // The handoff's page says who approved it, under which rule, with what comment.
    await page.getByRole('link', { name: 'Open as a handoff' }).click();
    await shown(page.getByTestId('hold-decided-by').getByText('otto@acme.test', { exact: true }));
    await shown(page.getByTestId('hold-comment').getByText('checked the migration', { exact: true }));
    const timeline = await shown(page.getByRole('list', { name: 'Events, oldest first' }));
    const approved = await shown(timeline.getByRole('article', { name: 'Approved and delivered by otto@acme.test' }));
    for (const line of [
      `Under the rule "external proposals" of ${ops.agent.handle}'s trust policy.`,
      'Comment: checked the migration',
      `Delivered to ${ops.agent.handle} as if just sent.`,
    ])
      await shown(approved.getByText(line, { exact: true }));
    await shown(timeline.getByRole('article', { name: 'Held for approval by the relay' }));
    expect(await timeline.getByRole('article', { name: /^Created by console:/ }).count()).toBe(0);
    await checkPage(page, 'approvals-operator-handoff-approved');

    // The queue no longer lists it (other test files of this run may leave held handoffs of their own in it).
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: /^Approvals/ })
      .click();
    await shown(page.getByRole('heading', { level: 1, name: 'Approvals' }));
    await shown(page.getByRole('table', { name: 'Handoffs held for approval, newest first' }).or(page.getByText('No handoff is waiting for approval.')));
    await eventually(async () => (await page.getByRole('row').filter({ hasText: summary }).count()) === 0, 30_000);
  });
});
