import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { parse as parseYaml } from 'yaml';
import type { TrustPolicy } from '@app/contracts';
import { EXIT, run } from '../apps/cli/src/cli';
import { markedSnippets } from '../scripts/ci/check-doc-snippets';
import { registerAgent, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

/**
 * `agentrelay trust show` and `trust apply` against a running relay: a policy goes through the
 * CLI's own file unchanged, every list included, and a file that leaves out a list the stored
 * policy has is refused rather than emptying it.
 */
describe('agentrelay trust show / apply keep every rule', () => {
  let relay: RelayHarness;
  let dir: string;
  const org = `trust${Math.random().toString(36).slice(2, 7)}`;
  const admin = (): { authorization: string } => ({ authorization: `Bearer ${TEST_ADMIN_TOKEN}` });

  const POLICY = {
    allow: ['*@partner', 'carol@vendor'],
    block: [`mallory@${org}`],
    hold: [
      { name: 'migrations', paths: ['db/migrations/**'], four_eyes: true, expires_after_minutes: 90 },
      { name: 'outsiders', outside_org: true, intents: ['propose_action'] },
    ],
    tool_prompts: [{ name: 'partner runs', senders: ['*@partner'], artifact_kinds: ['file_diff'] }],
    chain: { max_depth: 4, cycle_allowed_pairs: [`ops@${org}:review@${org}`] },
  };

  beforeAll(async () => {
    relay = await RelayHarness.start();
    dir = await mkdtemp(join(tmpdir(), 'agentrelay-trust-'));
  });

  afterAll(async () => {
    await relay?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await run(
      argv,
      { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) },
    );
    return { code, stdout, stderr };
  }

  async function stored(handle: string): Promise<Omit<TrustPolicy, 'updated_at'>> {
    const response = await request(relay.url).get(`/admin/agents/${handle}/trust`).set(admin()).expect(200);
    const { updated_at: _updatedAt, ...policy } = response.body as TrustPolicy;
    return policy;
  }

  async function agentWithPolicy(name: string): Promise<string> {
    const handle = uniqueHandle(name, org);
    await registerAgent(relay, { handle, name });
    await request(relay.url).put(`/admin/agents/${handle}/trust`).set(admin()).send(POLICY).expect(200);
    return handle;
  }

  it('trust show > file, then trust apply file, leaves the stored policy as it was: hold and tool-prompt rules included', async () => {
    const handle = await agentWithPolicy('ned');
    const before = await stored(handle);
    expect(before.hold).toHaveLength(2);
    expect(before.tool_prompts).toHaveLength(1);

    const shown = await cli(['trust', 'show', handle]);
    expect(shown).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(shown.stdout).toContain('name: migrations');
    expect(shown.stdout).toContain('name: partner runs');
    const file = join(dir, 'ned.yaml');
    await writeFile(file, shown.stdout);

    const applied = await cli(['trust', 'apply', file]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(EXIT.ok);
    expect(applied.stdout).toContain('four_eyes: true');
    expect(await stored(handle)).toEqual(before);
  });

  it('refuses a file that leaves out lists the stored policy has, naming them and their rules, and changes nothing', async () => {
    const handle = await agentWithPolicy('oli');
    const before = await stored(handle);
    const file = join(dir, 'oli-old.yaml');
    // What `trust show` printed before it showed hold and tool-prompt rules.
    await writeFile(file, `agent: ${handle}\nallow:\n  - "*@partner"\nblock: []\n`);

    const refused = await cli(['trust', 'apply', file]);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.stderr).toContain('hold: 2 hold rules ("migrations", "outsiders")');
    expect(refused.stderr).toContain('tool_prompts: 1 tool-prompt rules ("partner runs")');
    expect(refused.stderr).toContain('hold: []');
    expect(await stored(handle)).toEqual(before);
  });

  it("applies the CLI README's trust.yaml as written (for another agent) and shows it back", async () => {
    const [example] = markedSnippets('apps/cli/README.md', 'test/cli-trust.e2e-spec.ts');
    expect(example.info).toBe('yaml');
    const handle = uniqueHandle('frank', org);
    await registerAgent(relay, { handle, name: 'Frank' });
    const file = join(dir, 'readme-trust.yaml');
    await writeFile(file, example.body.replace('agent: frank@acme ', `agent: ${handle} `));
    const applied = await cli(['trust', 'apply', file]);
    expect(applied).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(await stored(handle)).toEqual({
      handle,
      allow: ['carol@partner', '*@vendor'],
      block: ['mallory@acme'],
      hold: [{ name: 'migrations', paths: ['db/migrations/**'], four_eyes: true }],
      tool_prompts: [],
      chain: {},
    });
  });

  it.each(['docs/admin-api.md', 'docs/operations.md', 'docs/agents.md'])(
    "applies %s's trust.yaml examples as written (for another agent)",
    async (document) => {
      const examples = markedSnippets(document, 'test/cli-trust.e2e-spec.ts');
      expect(examples.length).toBeGreaterThan(0);
      for (const [index, example] of examples.entries()) {
        const handle = uniqueHandle('ops', org);
        await registerAgent(relay, { handle, name: 'Ops' });
        const text = example.body.replace(/^agent: \S+/m, `agent: ${handle}`);
        const file = join(dir, `${document.replace(/\W/g, '-')}-${index}.yaml`);
        await writeFile(file, text);
        const applied = await cli(['trust', 'apply', file]);
        expect(applied).toMatchObject({ code: EXIT.ok, stderr: '' });
        const { agent: _agent, ...lists } = parseYaml(text) as Record<string, unknown>;
        expect(await stored(handle)).toEqual({ handle, allow: [], block: [], hold: [], tool_prompts: [], chain: {}, ...lists });
      }
    },
  );

  it('applies a file that empties a list on purpose (hold: [])', async () => {
    const handle = await agentWithPolicy('pia');
    const file = join(dir, 'pia.yaml');
    await writeFile(file, `agent: ${handle}\nallow: []\nblock: []\nhold: []\nchain: {}\ntool_prompts:\n  - name: everything\n`);
    const applied = await cli(['trust', 'apply', file, '--json']);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(EXIT.ok);
    expect(await stored(handle)).toEqual({ handle, allow: [], block: [], hold: [], tool_prompts: [{ name: 'everything' }], chain: {} });
  });
});
