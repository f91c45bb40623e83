import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Page } from 'playwright-core';
import request from 'supertest';
import { PERMISSION_REQUEST_KIND, type PendingToolPrompt, type PermissionRequest } from '@app/contracts';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import { SCREENSHOT_DIR, seriousAccessibilityViolations, shown, type ConsoleBrowser, signInToConsole, consoleSessionHeaders } from './support/console-browser';
import { consoleOidcEnv, registerConsoleClient, startConsoleProvider } from './support/console-oidc';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const QUESTION_LIFETIME_MS = 10 * 60_000;

/**
 * Tool prompts answered by people, in a browser (docs/decisions/0031-tool-prompts-answered-by-people.md):
 * a tool-prompt rule of the recipient's trust policy gives a handoff's tool prompts to the approvers;
 * the recipient asks about a tool on it (as its worker would); the Approvals page lists the
 * question; a viewer reads it with no control, four eyes keep the sending agent's owner from
 * answering, an approver denies it with a reason; the task then carries the answer, which the
 * handoff's page shows; every page is axe-clean.
 */
describe('console tool prompts in a browser', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let taskId: string;
  let question: PermissionRequest;
  const browsers: ConsoleBrowser[] = [];
  const suffix = randomUUID().slice(0, 6);
  const consoleUrl = (path = ''): string => `${relay.url}/console/${path}`;
  const summary = `Run the migration check ${suffix}`;
  const reason = 'Not on the production database';

  async function signInAs(login: string, name: string): Promise<ConsoleBrowser> {
    const browser = await signInToConsole(consoleUrl(), provider.issuer, login, name);
    browsers.push(browser);
    return browser;
  }

  async function checkPage(page: Page, name: string): Promise<void> {
    expect([name, await seriousAccessibilityViolations(page)]).toEqual([name, []]);
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
  }

  const promptsTable = (page: Page) => page.getByRole('table', { name: 'Tool prompts waiting for a person, oldest first' });

  /** From the navigation to the Approvals page, and its row of this run's question, with what it shows of it. */
  async function openPromptRow(page: Page) {
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: /^Approvals/ })
      .click();
    await shown(page.getByRole('heading', { level: 1, name: 'Approvals' }));
    await shown(page.getByRole('heading', { level: 2, name: 'Tool prompts' }));
    const row = await shown(promptsTable(page).getByRole('row').filter({ hasText: summary }));
    await shown(row.getByRole('link', { name: `${bob.agent.handle} → ${ops.agent.handle}` }));
    for (const text of ['Bash', 'outside senders (four eyes)']) await shown(row.getByText(text, { exact: true }));
    await shown(row.getByText('"command": "npm run migrate -- --check"', { exact: false }));
    return row;
  }

  /** The recipient asks about `toolName` on the handoff, as its worker would (apps/cli/src/hooks/tool-prompt-asker.ts), until the queue lists it. */
  async function ask(toolName: string, toolInput: unknown): Promise<PermissionRequest> {
    const asked: PermissionRequest = {
      kind: PERMISSION_REQUEST_KIND,
      request_id: randomUUID(),
      tool_name: toolName,
      tool_input: toolInput,
      client: 'claude-code',
      hook_event: 'PreToolUse',
      expires_at: new Date(Date.now() + QUESTION_LIFETIME_MS).toISOString(),
      answered_by: 'approvers',
    };
    await ok(relay.url, ops.api_key, 'message/send', {
      task_id: taskId,
      message: {
        parts: [
          {
            type: 'text',
            text: `Permission needed: Claude Code wants to use ${toolName}. An approver answers request ${asked.request_id} in the console (Approvals).`,
          },
          { type: 'data', data: asked },
        ],
        payload: { permission_request: asked },
      },
      metadata: { client_idempotency_key: asked.request_id },
    });
    await eventually(async () => {
      const queue = await request(relay.url).get('/admin/approvals/tool-prompts').set(admin).expect(200);
      return (queue.body.items as PendingToolPrompt[]).some((item) => item.task_id === taskId && item.request.request_id === asked.request_id);
    }, 30_000);
    return asked;
  }

  const sessionOf = (browser: ConsoleBrowser): Promise<{ cookie: string; 'x-csrf-token': string }> => consoleSessionHeaders(browser, relay.url);

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    provider = await startConsoleProvider([
      { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
      { sub: 'owen', claims: { email: 'owen@partner.test', name: 'Owen Owner', agentrelay_role: 'approver' } },
      { sub: 'ann', claims: { email: 'ann@acme.test', name: 'Ann Approver', agentrelay_role: 'approver' } },
    ]);
    relay = await RelayHarness.start({ env: { RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST), ...consoleOidcEnv(provider) } });
    registerConsoleClient(provider, relay.url);
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops' });
    bob = await registerAgent(relay, { handle: `bob@partner${suffix}`, name: 'Bob', email: 'owen@partner.test', owner: { subject: 'owen' } });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ allow: [`*@partner${suffix}`], tool_prompts: [{ name: 'outside senders', outside_org: true, four_eyes: true }] })
      .expect(200);
    const sent = await ok(relay.url, bob.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: summary }] },
    });
    taskId = sent.task_id as string;

    question = await ask('Bash', { command: 'npm run migrate -- --check' });
  });

  afterAll(async () => {
    for (const browser of browsers) await browser.close();
    await relay?.stop();
    await provider?.stop();
  });

  it('a viewer reads the question with no control to answer it, and is told why', async () => {
    const { page } = await signInAs('vera', 'Vera Viewer');
    const row = await openPromptRow(page);
    await shown(page.getByTestId('tool-prompts-refused').getByText('Your role (viewer) may read tool prompts but not answer them', { exact: false }));
    for (const name of ['Allow', 'Deny']) expect([name, await page.getByRole('button', { name }).count()]).toEqual([name, 0]);
    expect(await row.getByRole('textbox').count()).toBe(0);
    await checkPage(page, 'approvals-tool-prompts-viewer');
  });

  it("four eyes: the sending agent's owner is told why they may not answer it", async () => {
    const { page } = await signInAs('owen', 'Owen Owner');
    const row = await openPromptRow(page);
    await shown(
      row
        .getByTestId('tool-prompt-refused')
        .getByText(`you own ${bob.agent.handle}, the sending agent, so another person must answer this tool prompt`, { exact: false }),
    );
    expect(await row.getByRole('button', { name: 'Allow' }).count()).toBe(0);
  });

  it('an approver denies it with a reason; the task carries the answer, and its page shows it; a question answered meanwhile is refused and said so', async () => {
    const browser = await signInAs('ann', 'Ann Approver');
    const { page } = browser;
    const row = await openPromptRow(page);
    await row.getByLabel('Reason').fill(reason);
    await checkPage(page, 'approvals-tool-prompts');
    await row.getByRole('button', { name: 'Deny' }).click();
    const dialog = await shown(page.getByRole('dialog', { name: 'Deny Bash?' }));
    await shown(dialog.getByText(`${ops.agent.handle}'s coding agent may not use Bash for this call`, { exact: false }));
    await dialog.getByRole('button', { name: 'Deny', exact: true }).click();
    await shown(
      page
        .getByTestId('tool-prompt-result')
        .getByText(`Denied: ${ops.agent.handle}'s coding agent may not use Bash (request ${question.request_id}); it is told "${reason}".`),
    );
    expect(await promptsTable(page).getByRole('row').filter({ hasText: summary }).count()).toBe(0);
    await checkPage(page, 'approvals-tool-prompts-answered');

    const detail = await request(relay.url).get(`/admin/tasks/${taskId}`).set(admin).expect(200);
    expect(detail.body.task.tool_prompts).toEqual({
      answered_by: 'approvers',
      rule: 'outside senders',
      four_eyes: true,
      answers: [{ request_id: question.request_id, decision: 'deny', reason, answered_by: 'ann@acme.test', answered_at: expect.any(String) }],
    });
    const queue = await request(relay.url).get('/admin/approvals/tool-prompts').set(admin).expect(200);
    expect((queue.body.items as PendingToolPrompt[]).filter((item) => item.task_id === taskId)).toEqual([]);

    // A question answered elsewhere while the page shows it: the answer is refused, the page says so, the row goes.
    const write = await ask('Write', { file_path: '/etc/hosts', content: '127.0.0.1 relay' });
    await page.reload();
    const writeRow = await shown(promptsTable(page).getByRole('row').filter({ hasText: '/etc/hosts' }));
    await request(relay.url)
      .post(`/admin/approvals/${taskId}/tool-prompts/${write.request_id}/allow`)
      .set(await sessionOf(browser))
      .send({})
      .expect(200);
    await writeRow.getByRole('button', { name: 'Allow' }).click();
    await (await shown(page.getByRole('dialog', { name: 'Allow Write?' }))).getByRole('button', { name: 'Allow', exact: true }).click();
    await shown(
      page.getByTestId('tool-prompt-result').getByText(`Not answered: Tool prompt ${write.request_id} of task ${taskId} is closed`, { exact: false }),
    );
    expect(await promptsTable(page).getByRole('row').filter({ hasText: '/etc/hosts' }).count()).toBe(0);

    await page.goto(consoleUrl(`handoffs/${encodeURIComponent(taskId)}`));
    const panel = await shown(page.getByRole('region', { name: 'Tool prompts' }));
    await shown(
      panel.getByText(`The rule "outside senders" of ${ops.agent.handle}'s trust policy gives this handoff's tool prompts to people`, { exact: false }),
    );
    const answer = await shown(
      panel.getByRole('table', { name: 'Answers to its tool prompts, oldest first' }).getByRole('row').filter({ hasText: question.request_id }),
    );
    for (const text of ['ann@acme.test', 'Denied', reason]) await shown(answer.getByText(text, { exact: true }));
    await shown(panel.getByRole('row').filter({ hasText: write.request_id }).getByText('Allowed', { exact: true }));
    await checkPage(page, 'handoff-tool-prompts');
  });
});
