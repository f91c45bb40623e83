import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import request from 'supertest';
import type { AdminTaskPage } from '@app/contracts';
import { markedSnippets } from '../scripts/ci/check-doc-snippets';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Runs a shell script in the clone, as a person pastes it into a terminal: bash, no `set -e`. */
function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * The README's "A first handoff" block, run as written against a running relay: only the relay's
 * address and admin token (which `npm start` prints) and the org (each run needs unused handles)
 * are put in. `npm run cli` runs the built CLI, so the project is built first (a build of the same
 * sources is reused).
 */
describe("the README's first handoff", () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    // A build of these sources is reused (seconds); otherwise this is the build the README's `npm start` would make.
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run build failed');
  }, 900_000);

  afterAll(async () => {
    await relay?.stop();
  });

  it('registers two agents, hands off, accepts and completes, and the sender sees it completed', async () => {
    const [block] = markedSnippets('README.md', 'test/readme-first-handoff.e2e-spec.ts');
    expect(block.info).toBe('sh');
    expect(block.body).toContain('RELAY_ADMIN_TOKEN=<the token npm start printed>');
    const org = `acme${Math.random().toString(36).slice(2, 8)}`;
    const script = block.body
      .replaceAll('http://127.0.0.1:8080', relay.url)
      .replaceAll('<the token npm start printed>', TEST_ADMIN_TOKEN)
      .replaceAll('@acme', `@${org}`);
    const { RELAY_URL: _url, RELAY_ADMIN_TOKEN: _token, AGENTRELAY_API_KEY: _key, ...env } = process.env;

    const { code, stdout, stderr } = await bash(script, env);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/"result":\{"task_id":"\w+","status":\{"state":"pending"\}/);
    const taskId = /"task_id":"(\w+)"/.exec(stdout)?.[1] as string;
    // The hint names the command the README ran, not an agentrelay that is not on the PATH in a clone.
    expect(stdout).toContain(`Accepted ${taskId}: read it with "npm run cli -- show ${taskId}".`);
    expect(stdout).toContain(`Completed ${taskId}.`);
    expect(stdout).toMatch(new RegExp(`${taskId}\\s+completed\\s+frank@${org}\\s+inform`));

    const tasks = await request(relay.url)
      .get('/admin/tasks')
      .query({ state: 'completed', limit: 200 })
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .expect(200);
    expect((tasks.body as AdminTaskPage).items.find((row) => row.id === taskId)).toMatchObject({
      sender: { handle: `bob@${org}` },
      recipient: { handle: `frank@${org}` },
    });
  }, 300_000);
});
