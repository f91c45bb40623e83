import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import type { AdminTaskChain } from '@app/contracts';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { CONSOLE_DIST } from './support/console-build';
import { SCREENSHOT_DIR, seriousAccessibilityViolations, shown, signInToConsole, type ConsoleBrowser } from './support/console-browser';
import { consoleOidcEnv, isSignedIn, registerConsoleClient, signInWithOidc, startConsoleProvider, type OidcSignIn } from './support/console-oidc';
import { ok, rpc, type Json } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/**
 * A handoff's chain in the console (docs/chains.md): `GET /admin/tasks/{id}/chain` reads the chain
 * (the path from the root, the handoff's children, the tree breadth-first, as many as asked) and
 * the refusals of its bounds, to the roles that read a handoff (an auditor without what agents
 * wrote); a handoff's page shows it as a tree of links with depth and state, this handoff marked,
 * and the refusals, axe-clean, in Debian's Chromium.
 */
describe('a handoff chain in the console', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let browser: ConsoleBrowser | undefined;
  const suffix = randomUUID().slice(0, 6);
  const agents: Record<string, RegisteredTestAgent> = {};
  const ids: Record<string, string> = {};
  const sessions: Record<'viewer' | 'auditor', OidcSignIn> = {} as never;
  const summaries = {
    root: `Check release 1.4 before it ships (${suffix})`,
    changelog: `Check the changelog of release 1.4 (${suffix})`,
    tests: `Run the integration tests for release 1.4 (${suffix})`,
    links: `Verify the links in the changelog (${suffix})`,
    spelling: `Check the spelling of the changelog (${suffix})`,
  };

  /** A handoff in the AgentRelay dialect, for the task `parent` when given: its task id. */
  const handOff = async (sender: string, recipient: string, text: string, parent?: string): Promise<string> => {
    const sent = await ok(relay.url, agents[sender].api_key, 'message/send', {
      recipient: agents[recipient].agent.handle,
      ...(parent ? { parent_task_id: parent } : {}),
      message: { role: 'user', parts: [{ type: 'text', text }] },
    });
    return sent.task_id as string;
  };

  const readChain = (id: string, as: Record<string, string> = admin, query = ''): request.Test =>
    request(relay.url).get(`/admin/tasks/${id}/chain${query}`).set(as);
  const sessionOf = (role: 'viewer' | 'auditor'): Record<string, string> => ({ cookie: sessions[role].cookie });

  beforeAll(async () => {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    provider = await startConsoleProvider([
      { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
      { sub: 'aud', claims: { email: 'aud@acme.test', name: 'Aud Auditor', agentrelay_role: 'auditor' } },
    ]);
    relay = await RelayHarness.start({ env: { RELAY_CONSOLE_DIR: resolve(CONSOLE_DIST), ...consoleOidcEnv(provider) } });
    registerConsoleClient(provider, relay.url);
    for (const name of ['alice', 'bob', 'carol', 'dave', 'erin']) {
      agents[name] = await registerAgent(relay, { handle: `${name}@acme${suffix}`, name: name[0].toUpperCase() + name.slice(1) });
    }
    // Alice asks Bob; Bob asks Carol and Dave for it; Carol asks Erin for hers, then tries to hand it back to Alice.
    ids.root = await handOff('alice', 'bob', summaries.root);
    ids.changelog = await handOff('bob', 'carol', summaries.changelog, ids.root);
    ids.tests = await handOff('bob', 'dave', summaries.tests, ids.root);
    ids.links = await handOff('carol', 'erin', summaries.links, ids.changelog);
    await ok(relay.url, agents.carol.api_key, 'tasks/update', { task_id: ids.changelog, transition: 'accept' });
    await ok(relay.url, agents.dave.api_key, 'tasks/update', { task_id: ids.tests, transition: 'decline' });
    const loop = await rpc(relay.url, agents.carol.api_key, 'message/send', {
      recipient: agents.alice.agent.handle,
      parent_task_id: ids.changelog,
      message: { role: 'user', parts: [{ type: 'text', text: 'Can you check it once more?' }] },
    });
    expect(loop.body.error).toMatchObject({ data: { reason: 'chain_cycle', parent_task_id: ids.changelog, root_task_id: ids.root } });
    for (const [role, login] of [
      ['viewer', 'vera'],
      ['auditor', 'aud'],
    ] as const) {
      const signedIn = await signInWithOidc(relay.url, login);
      if (!isSignedIn(signedIn)) throw new Error(`signing in as ${login} answered ${signedIn.status}`);
      sessions[role] = signedIn;
    }
  });

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await provider?.stop();
  });

  it('reads the chain of a handoff: every handoff of the tree with its place and state, and the refusal of its bounds', async () => {
    const chain = (await readChain(ids.changelog).expect(200)).body as AdminTaskChain;
    expect(chain).toMatchObject({ task_id: ids.changelog, root_task_id: ids.root, total: 4, nodes_truncated: false, refusals_truncated: false });
    expect(chain.nodes.map((node) => [node.id, node.chain, node.state, node.summary])).toEqual([
      [ids.root, { parent_task_id: null, root_task_id: ids.root, depth: 0 }, 'pending', summaries.root],
      ...[
        [ids.changelog, 'accepted', summaries.changelog],
        [ids.tests, 'rejected', summaries.tests],
      ]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([id, state, summary]) => [id, { parent_task_id: ids.root, root_task_id: ids.root, depth: 1 }, state, summary]),
      [ids.links, { parent_task_id: ids.changelog, root_task_id: ids.root, depth: 2 }, 'pending', summaries.links],
    ]);
    const { alice, bob, carol } = agents;
    expect(chain.refusals).toEqual([
      {
        id: expect.any(String),
        at: expect.any(String),
        reason: 'chain_cycle',
        sender: carol.agent.handle,
        recipient: alice.agent.handle,
        limit: 1,
        limit_name: 'cycles',
        path: [alice.agent.handle, bob.agent.handle, carol.agent.handle, alice.agent.handle],
        parent_task_id: ids.changelog,
      },
    ]);
    // Every handoff of the chain reads the same chain, the root's and a leaf's too.
    for (const id of [ids.root, ids.links]) {
      const same = (await readChain(id.toLowerCase()).expect(200)).body as AdminTaskChain;
      expect({ task: same.task_id, total: same.total, nodes: same.nodes.length, refusals: same.refusals.length }).toEqual({
        task: id,
        total: 4,
        nodes: 4,
        refusals: 1,
      });
    }
  });

  it('carries as many handoffs as asked besides the path to the handoff, its children first, and says the tree has more', async () => {
    const one = (await readChain(ids.links, admin, '?limit=1').expect(200)).body as AdminTaskChain;
    // The path root → changelog → links always; then one more: links has no children, so the root's tree from the top (the root, already there).
    expect(one.nodes.map((node) => node.id)).toEqual([ids.root, ids.changelog, ids.links]);
    expect(one).toMatchObject({ total: 4, nodes_truncated: true });
    const fromRoot = (await readChain(ids.root, admin, '?limit=2').expect(200)).body as AdminTaskChain;
    expect(fromRoot.nodes.map((node) => node.id)).toEqual([ids.root, ...[ids.changelog, ids.tests].sort()]);
    expect(fromRoot.nodes_truncated).toBe(true);
    // Every handoff shown has its parent shown, so the tree holds together.
    for (const node of [...one.nodes, ...fromRoot.nodes]) {
      const parent = node.chain?.parent_task_id;
      if (parent) expect([...one.nodes, ...fromRoot.nodes].map((shownNode) => shownNode.id)).toContain(parent);
    }
    for (const bad of ['?limit=0', '?limit=501', '?limit=many']) {
      const refused = await readChain(ids.root, admin, bad);
      expect([bad, refused.status]).toEqual([bad, 400]);
    }
  });

  it('answers as the task read does: 404 for no such handoff, 401 without a session, an auditor without what agents wrote', async () => {
    expect((await readChain('01HXYZ4K2VNJQP7R8MWDB3CSTF').expect(404)).body).toMatchObject({ error: { reason: 'task_not_found' } });
    expect((await readChain('not-a-task-id').expect(404)).body).toMatchObject({ error: { reason: 'task_not_found' } });
    await request(relay.url).get(`/admin/tasks/${ids.root}/chain`).expect(401);

    const viewer = (await readChain(ids.changelog, sessionOf('viewer')).expect(200)).body as Json;
    expect(viewer.bodies_hidden).toBeUndefined();
    expect((viewer.nodes as Json[]).map((node) => node.summary)).toContain(summaries.links);

    const auditor = (await readChain(ids.changelog, sessionOf('auditor')).expect(200)).body as Json;
    expect(auditor.bodies_hidden).toBe(true);
    expect((auditor.nodes as Json[]).map((node) => node.summary)).toEqual(['', '', '', '']);
    expect(JSON.stringify(auditor)).not.toContain(suffix + ')');
    // Who, where and what state stay: what an audit needs.
    expect(auditor.nodes).toHaveLength(4);
    expect(auditor.refusals).toHaveLength(1);
    const detail = (await request(relay.url).get(`/admin/tasks/${ids.changelog}`).set(sessionOf('auditor')).expect(200)).body as Json;
    expect(detail.bodies_hidden).toBe(true);
  });

  it("shows the chain on a handoff's page as a tree of links with depth and state, this handoff marked, and the refusals; axe-clean", async () => {
    browser = await signInToConsole(`${relay.url}/console/`, provider.issuer, 'vera', 'Vera Viewer');
    const { page } = browser;
    await page.goto(`${relay.url}/console/handoffs/${ids.changelog}`);
    await shown(page.getByRole('heading', { level: 1, name: summaries.changelog }));
    const section = page.getByRole('region', { name: 'Chain' });
    const tree = await shown(section.getByRole('list', { name: 'The chain from its root' }));
    await shown(section.getByTestId('chain-summary').getByText('4 handoffs in this chain.'));

    // The root at the top, Bob's two handoffs made for it one level down, Erin's below Carol's.
    const rootItem = tree
      .getByRole('listitem')
      .filter({ has: page.getByRole('link', { name: summaries.root }) })
      .first();
    const madeForRoot = rootItem.getByRole('list', { name: `Handoffs made for ${summaries.root}` });
    await shown(madeForRoot.getByRole('link', { name: summaries.tests }));
    const current = madeForRoot.getByRole('link', { name: summaries.changelog });
    expect(await current.getAttribute('aria-current')).toBe('page');
    const changelogItem = madeForRoot.getByRole('listitem').filter({ has: page.getByRole('link', { name: summaries.changelog }) });
    await shown(changelogItem.getByText('(this handoff)'));
    await shown(changelogItem.getByText('Accepted', { exact: true }));
    await shown(changelogItem.getByRole('list', { name: `Handoffs made for ${summaries.changelog}` }).getByRole('link', { name: summaries.links }));
    const testsItem = madeForRoot.getByRole('listitem').filter({ has: page.getByRole('link', { name: summaries.tests }) });
    await shown(testsItem.getByText(`${agents.bob.agent.handle} → ${agents.dave.agent.handle} · depth 1 ·`));
    await shown(testsItem.getByText('Rejected', { exact: true }));
    expect(await tree.getByRole('link').count()).toBe(4);
    expect(await tree.locator('[aria-current="page"]').count()).toBe(1);

    const refusals = section.getByRole('table', { name: 'Refused handoffs' });
    const refusal = await shown(refusals.getByRole('row').filter({ hasText: 'chain_cycle' }));
    await shown(refusal.getByText(`${agents.carol.agent.handle} → ${agents.alice.agent.handle}`, { exact: true }));
    await shown(refusal.getByText('Loop back to an agent on the chain', { exact: false }));
    await shown(refusal.getByText('each agent once on a path'));
    await shown(refusal.getByRole('link', { name: ids.changelog }));

    expect(await seriousAccessibilityViolations(page)).toEqual([]);
    await section.screenshot({ path: join(SCREENSHOT_DIR, 'chain.png') });
    await page.screenshot({ path: join(SCREENSHOT_DIR, 'chain-handoff.png'), fullPage: true });

    // The tree follows the live events, without a reload: Erin accepts hers, and Carol makes another handoff for hers.
    await page.evaluate(() => Object.assign(globalThis, { chainTestMark: 'still here' }));
    await ok(relay.url, agents.erin.api_key, 'tasks/update', { task_id: ids.links, transition: 'accept' });
    const linksItem = tree.getByRole('listitem').filter({ has: page.getByRole('link', { name: summaries.links }) });
    await shown(linksItem.getByText('Accepted', { exact: true }));
    await handOff('carol', 'dave', summaries.spelling, ids.changelog);
    await shown(changelogItem.getByRole('list', { name: `Handoffs made for ${summaries.changelog}` }).getByRole('link', { name: summaries.spelling }));
    await shown(section.getByTestId('chain-summary').getByText('5 handoffs in this chain.'));
    expect(await page.evaluate(() => (globalThis as { chainTestMark?: string }).chainTestMark)).toBe('still here');

    // Each handoff of the tree leads to its own page, where it is the one marked.
    await tree.getByRole('link', { name: summaries.links }).click();
    await shown(page.getByRole('heading', { level: 1, name: summaries.links }));
    const moved = page.getByRole('region', { name: 'Chain' }).getByRole('link', { name: summaries.links });
    await shown(moved);
    expect(await moved.getAttribute('aria-current')).toBe('page');
    // The chain's page needs nothing the console's CSP refuses (sign-in's 401 before a session, and the provider's pages, say other things).
    expect(browser.consoleErrors.filter((error) => /Content Security Policy/i.test(error))).toEqual([]);
  });
});
