import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentAuthenticator } from '../apps/edge/src/auth/auth.module';
import { EXIT, run } from '../apps/cli/src/cli';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

describe('agentrelay CLI against a running relay', () => {
  let relay: RelayHarness;
  let dir: string;
  const org = `cli${Math.random().toString(36).slice(2, 7)}`;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    dir = await mkdtemp(join(tmpdir(), 'agentrelay-cli-'));
  });

  afterAll(async () => {
    await relay?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function cli(
    argv: string[],
    env: Record<string, string | undefined> = { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
  ): Promise<Captured> {
    let stdout = '';
    let stderr = '';
    const code = await run(argv, env, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
    return { code, stdout, stderr };
  }

  it('registers an agent and prints its key, which then authenticates', async () => {
    const result = await cli(['register', `kim@${org}`, '--name', 'Kim', '--role', 'backend', '--skills', 'go, sql', '--email', 'kim@example.com']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(EXIT.ok);
    const key = /(ah_live_[A-Z2-7]{32})/.exec(result.stdout)?.[1];
    expect(key).toBeDefined();
    await expect(relay.edge.get(AgentAuthenticator).authenticate({ 'x-api-key': key as string })).resolves.toMatchObject({
      handle: `kim@${org}`,
      role: 'backend',
    });
  });

  it('prints JSON with --json, and lists agents', async () => {
    const registered = await cli(['register', `lee@${org}`, '--name', 'Lee', '--json', '--metadata', '{"repos_owned":["apps/api/"]}']);
    expect(registered.code).toBe(EXIT.ok);
    const body = JSON.parse(registered.stdout);
    expect(body.agent).toMatchObject({ handle: `lee@${org}`, name: 'Lee', metadata: { repos_owned: ['apps/api/'] } });
    expect(body.api_key).toMatch(/^ah_live_[A-Z2-7]{32}$/);

    const listed = await cli(['agents', '--json']);
    expect(listed.code).toBe(EXIT.ok);
    const handles = JSON.parse(listed.stdout).items.map((agent: { handle: string }) => agent.handle);
    expect(handles).toEqual(expect.arrayContaining([`kim@${org}`, `lee@${org}`]));
    const human = await cli(['agents']);
    expect(human.stdout).toMatch(new RegExp(`lee@${org}\\s+Lee`));
  });

  it('shows that an agent the admin token registered has no owner, and refuses an owner by sub alone without a console sign-in', async () => {
    expect((await cli(['register', `oona@${org}`, '--name', 'Oona'])).code).toBe(EXIT.ok);
    expect((await cli(['show', `oona@${org}`])).stdout).toContain('owner:       - (four eyes refuse everyone until one is recorded)');
    const bySubAlone = await cli(['update', `oona@${org}`, '--owner', 'owen']);
    expect(bySubAlone.code).not.toBe(EXIT.ok);
    expect(bySubAlone.stderr).toContain('owner.issuer: name the OpenID Provider');
  });

  it("sets the media types an agent accepts, and restores the relay's default", async () => {
    const registered = await cli(['register', `ida@${org}`, '--name', 'Ida', '--json', '--input-modes', 'text/*, image/png']);
    expect(registered.code).toBe(EXIT.ok);
    expect(JSON.parse(registered.stdout).agent.input_modes).toEqual(['text/*', 'image/png']);
    expect((await cli(['show', `ida@${org}`])).stdout).toMatch(/input modes: text\/\*, image\/png/);
    const reset = await cli(['update', `ida@${org}`, '--input-modes', 'default', '--json']);
    expect(JSON.parse(reset.stdout).input_modes).toBeNull();
    const invalid = await cli(['update', `ida@${org}`, '--input-modes', 'pictures']);
    expect(invalid.code).not.toBe(EXIT.ok);
    expect(invalid.stderr).toMatch(/input_modes/);
  });

  it('rotates and revokes keys', async () => {
    const first = JSON.parse((await cli(['register', `max@${org}`, '--name', 'Max', '--json'])).stdout);
    const rotated = await cli(['keys', 'rotate', `max@${org}`, '--revoke-old', '--json']);
    expect(rotated.code).toBe(EXIT.ok);
    const reply = JSON.parse(rotated.stdout);
    expect(reply.api_key).toMatch(/^ah_live_/);
    expect(reply.revoked.map((key: { prefix: string }) => key.prefix)).toEqual([first.key.prefix]);
    const authenticator = relay.edge.get(AgentAuthenticator);
    await expect(authenticator.authenticate({ 'x-api-key': first.api_key })).rejects.toMatchObject({ reason: 'unauthenticated' });
    await expect(authenticator.authenticate({ 'x-api-key': reply.api_key })).resolves.toMatchObject({ handle: `max@${org}` });

    const revoked = await cli(['keys', 'revoke', `max@${org}`, reply.key.prefix]);
    expect(revoked.code).toBe(EXIT.ok);
    await expect(authenticator.authenticate({ 'x-api-key': reply.api_key })).rejects.toMatchObject({ reason: 'unauthenticated' });
    const again = await cli(['keys', 'revoke', `max@${org}`, reply.key.prefix]);
    expect(again.code).toBe(EXIT.apiError);
    expect(again.stderr).toMatch(/404 key_not_found/);
  });

  it('applies a trust.yaml file and shows the policy', async () => {
    await cli(['register', `ned@${org}`, '--name', 'Ned']);
    const file = join(dir, 'trust.yaml');
    await writeFile(file, `agent: ned@${org}\nallow:\n  - "*@partner"\n  - carol@vendor\nblock:\n  - mallory@${org}\n`);
    const applied = await cli(['trust', 'apply', file]);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(EXIT.ok);
    const shown = await cli(['trust', 'show', `ned@${org}`, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({ handle: `ned@${org}`, allow: ['*@partner', 'carol@vendor'], block: [`mallory@${org}`] });
    const yaml = await cli(['trust', 'show', `ned@${org}`]);
    expect(yaml.stdout).toContain(`agent: ned@${org}`);
    expect(yaml.stdout).toContain('- "*@partner"');
  });

  it('sets, shows and clears an agent’s own webhook timeout, and refuses one out of bounds', async () => {
    expect((await cli(['register', `tim@${org}`, '--name', 'Tim', '--webhook-timeout-ms', '2500'])).code).toBe(EXIT.ok);
    expect((await cli(['show', `tim@${org}`])).stdout).toMatch(/timeout: +2500 ms/);
    const cleared = await cli(['update', `tim@${org}`, '--webhook-timeout-ms', 'default', '--json']);
    expect(JSON.parse(cleared.stdout).webhook_timeout_ms).toBeNull();
    expect((await cli(['show', `tim@${org}`])).stdout).toMatch(/timeout: +relay default/);

    const tooShort = await cli(['update', `tim@${org}`, '--webhook-timeout-ms', '500']);
    expect(tooShort.code).toBe(EXIT.apiError);
    expect(tooShort.stderr).toMatch(/webhook_timeout_ms: webhook_timeout_ms must be at least 1000/);
    const notANumber = await cli(['update', `tim@${org}`, '--webhook-timeout-ms', '2s']);
    expect(notANumber.code).toBe(EXIT.usage);
    expect(notANumber.stderr).toMatch(/--webhook-timeout-ms/);
  });

  it('fails with clear messages and non-zero exit codes', async () => {
    const taken = await cli(['register', `kim@${org}`, '--name', 'Kim again']);
    expect(taken.code).toBe(EXIT.apiError);
    expect(taken.stderr).toMatch(/409 handle_taken/);

    const invalid = await cli(['register', 'Not A Handle', '--name', 'X', '--webhook-url', 'nope']);
    expect(invalid.code).toBe(EXIT.apiError);
    expect(invalid.stderr).toMatch(/400 invalid_params/);
    expect(invalid.stderr).toMatch(/handle:/);
    expect(invalid.stderr).toMatch(/notification_webhook_url:/);

    const noName = await cli(['register', `x@${org}`]);
    expect(noName.code).toBe(EXIT.usage);
    expect(noName.stderr).toMatch(/--name/);

    expect((await cli(['frobnicate'])).code).toBe(EXIT.usage);
    expect((await cli(['agents', '--bogus'])).code).toBe(EXIT.usage);

    const badToken = await cli(['agents'], { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: 'wrong-token-0123456789' });
    expect(badToken.code).toBe(EXIT.unauthorized);
    expect(badToken.stderr).toMatch(/401 unauthenticated/);

    const noToken = await cli(['agents'], { RELAY_URL: relay.url });
    expect(noToken.code).toBe(EXIT.usage);
    expect(noToken.stderr).toMatch(/RELAY_ADMIN_TOKEN/);

    const unreachable = await cli(['agents', '--json'], { RELAY_URL: 'http://127.0.0.1:1', RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    expect(unreachable.code).toBe(EXIT.unreachable);
    expect(JSON.parse(unreachable.stderr).exit_code).toBe(EXIT.unreachable);

    const deliveries = await cli(['deliveries', '--status', 'dead', '--json']);
    expect(deliveries.code).toBe(EXIT.ok);
    const listed = JSON.parse(deliveries.stdout) as { deliveries: Array<{ status: string }> };
    expect(Array.isArray(listed.deliveries)).toBe(true);
    expect(listed.deliveries.every((delivery) => delivery.status === 'dead')).toBe(true);
    const badStatus = await cli(['deliveries', '--status', 'nope']);
    expect(badStatus.code).toBe(EXIT.apiError);
    expect(badStatus.stderr).toMatch(/400 invalid_params/);
    const missing = await cli(['redeliver', '00000000-0000-4000-8000-000000000000']);
    expect(missing.code).toBe(EXIT.apiError);
    expect(missing.stderr).toMatch(/404 delivery_not_found/);

    const help = await cli(['--help']);
    expect(help.code).toBe(EXIT.ok);
    expect(help.stdout).toMatch(/register <handle> --name/);
  });
});
