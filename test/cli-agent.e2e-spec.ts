import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as PgClient } from 'pg';
import type { Task, TaskListItem } from '@app/relay-client';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { forbiddenCharacters, HOSTILE } from './support/hostile-text';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `agentrelay …` as a real process (the CLI's TypeScript sources through the test loader). */
function agentrelay(args: string[], env: Record<string, string>): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', REGISTER_TS, 'apps/cli/src/main.ts', ...args], { cwd: ROOT, env }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const PATCH =
  'diff --git a/src/api/users.ts b/src/api/users.ts\n--- a/src/api/users.ts\n+++ b/src/api/users.ts\n@@ -1 +1 @@\n-export const users = [];\n+export const users = { items: [], next_cursor: null };\n';

/** These tests start real processes, one per command: a loaded machine starts each of them slowly. */
const PROCESS_TEST_TIMEOUT_MS = 240_000;

describe('agentrelay agent commands against a running relay', () => {
  let relay: RelayHarness;
  let db: PgClient;
  let dir: string;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;
  const org = `cliagent${Math.random().toString(36).slice(2, 7)}`;
  const as = (agent: RegisteredTestAgent, extra: Record<string, string> = {}): Record<string, string> => ({
    RELAY_URL: relay.url,
    AGENTRELAY_API_KEY: agent.api_key,
    ...extra,
  });

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new PgClient({ connectionString: testDatabaseUrl() });
    await db.connect();
    dir = await mkdtemp(join(tmpdir(), 'agentrelay-cli-agent-'));
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob', role: 'backend' });
    frank = await registerAgent(relay, { handle: uniqueHandle('frank', org), name: 'Frank', role: 'frontend' });
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'plays a whole handoff: send with a diff and a test command, inbox, show, accept, reply, complete',
    async () => {
      const patch = join(dir, 'users.patch');
      await writeFile(patch, PATCH);
      const key = randomUUID();
      const sendArgs = [
        'send',
        frank.agent.handle,
        'Refactored /users API: paginated now',
        '--diff',
        patch,
        '--test',
        'npm test -- users',
        '--idempotency-key',
        key,
        '--json',
      ];
      const sent = await agentrelay(sendArgs, as(bob));
      expect(sent.stderr).toBe('');
      expect(sent.code).toBe(EXIT.ok);
      const created = JSON.parse(sent.stdout) as { task_id: string; status: { state: string }; idempotency_key: string };
      expect(created).toMatchObject({ status: { state: 'pending' }, idempotency_key: key, recipient: frank.agent.handle });
      const taskId = created.task_id;
      const again = await agentrelay(sendArgs, as(bob));
      expect(JSON.parse(again.stdout).task_id).toBe(taskId);

      const inbox = await agentrelay(['inbox'], as(frank));
      expect(inbox.code).toBe(EXIT.ok);
      expect(inbox.stdout).toMatch(/^TASK\s+STATE\s+FROM\s+INTENT\s+UNREAD\s+UPDATED\s+SUMMARY/);
      expect(inbox.stdout).toMatch(new RegExp(`${taskId}\\s+pending\\s+${bob.agent.handle.replace('.', '\\.')}\\s+inform\\s+1\\s`));
      expect(inbox.stdout).toContain('1 thread, 1 unread message.');
      const inboxJson = JSON.parse((await agentrelay(['inbox', '--status', 'pending', '--json'], as(frank))).stdout) as {
        items: TaskListItem[];
        total_unread: number;
      };
      expect(inboxJson.items.map((item) => item.task_id)).toEqual([taskId]);

      const shown = await agentrelay(['show', taskId], as(frank));
      expect(shown.code).toBe(EXIT.ok);
      expect(shown.stdout).toContain(`Handoff ${taskId}: pending`);
      expect(shown.stdout).toContain('file_diff src/api/users.ts (');
      expect(shown.stdout).toContain('+export const users = { items: [], next_cursor: null };');
      expect(shown.stdout).toContain('test_command `npm test -- users`');
      const read = JSON.parse((await agentrelay(['inbox', '--json'], as(frank))).stdout) as { items: TaskListItem[] };
      expect(read.items.find((item) => item.task_id === taskId)?.unread_messages).toBe(0);

      expect((await agentrelay(['accept', taskId], as(frank, { AGENTRELAY_SESSION_ID: 'codex-cli-7' }))).code).toBe(EXIT.ok);
      const audit = await db.query(`SELECT "session_id" FROM "tasks"."audit_log" WHERE "task_id" = $1 AND "transition" = 'accept'`, [taskId]);
      expect(audit.rows).toEqual([{ session_id: 'codex-cli-7' }]);
      const replied = await agentrelay(['reply', taskId, 'Is next_cursor null on the last page?'], as(frank));
      expect(replied.stdout).toBe(`Replied in ${taskId} (message #2).\n`);

      const bobView = JSON.parse((await agentrelay(['show', taskId, '--json'], as(bob))).stdout) as Task;
      expect(bobView.messages.map((message) => message.body)).toEqual(['Refactored /users API: paginated now', 'Is next_cursor null on the last page?']);
      expect(bobView.artifacts).toEqual([
        { type: 'file_diff', path: 'src/api/users.ts', diff: PATCH },
        { type: 'test_command', command: 'npm test -- users' },
      ]);

      expect((await agentrelay(['complete', taskId, 'Client reads items/next_cursor; tests pass.'], as(frank))).code).toBe(EXIT.ok);
      const sentList = await agentrelay(['sent', '--status', 'completed'], as(bob));
      expect(sentList.stdout).toMatch(/^TASK\s+STATE\s+TO\s+INTENT/);
      expect(sentList.stdout).toMatch(new RegExp(`${taskId}\\s+completed\\s+${frank.agent.handle.replace('.', '\\.')}\\s+inform`));
      const done = await agentrelay(['show', taskId], as(bob));
      expect(done.stdout).toContain('Result: Client reads items/next_cursor; tests pass.');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'exits with codes that say what went wrong',
    async () => {
      const sent = JSON.parse((await agentrelay(['send', frank.agent.handle, 'Short-lived', '--json'], as(bob))).stdout) as { task_id: string };
      expect((await agentrelay(['accept', sent.task_id], as(frank))).code).toBe(EXIT.ok);
      expect((await agentrelay(['complete', sent.task_id, 'Done.'], as(frank))).code).toBe(EXIT.ok);

      const late = await agentrelay(['reply', sent.task_id, 'One more thing'], as(bob));
      expect(late.code).toBe(EXIT.conflict);
      expect(late.stderr).toContain('thread_terminal (-32007)');
      expect(late.stderr).toContain('The thread is completed; start a new handoff instead of replying.');

      const nobody = await agentrelay(['send', `nobody@${org}`, 'Hello?', '--json'], as(bob));
      expect(nobody.code).toBe(EXIT.notFound);
      expect(JSON.parse(nobody.stderr)).toMatchObject({ error: { reason: 'recipient_not_found', code: -32004 }, exit_code: EXIT.notFound });

      const missing = await agentrelay(['show', '01J00000000000000000000000'], as(bob));
      expect(missing.code).toBe(EXIT.notFound);

      const badKey = await agentrelay(['inbox'], as(bob, { AGENTRELAY_API_KEY: `ah_live_${'A'.repeat(32)}` }));
      expect(badKey.code).toBe(EXIT.unauthorized);
      expect(badKey.stderr).toContain('unauthenticated');
      expect(badKey.stderr).toContain('AGENTRELAY_API_KEY');

      const noKey = await agentrelay(['inbox'], { RELAY_URL: relay.url });
      expect(noKey.code).toBe(EXIT.usage);
      expect(noKey.stderr).toContain('AGENTRELAY_API_KEY');

      const unreachable = await agentrelay(['inbox'], { RELAY_URL: 'http://127.0.0.1:1', AGENTRELAY_API_KEY: bob.api_key });
      expect(unreachable.code).toBe(EXIT.unreachable);

      const badStatus = await agentrelay(['inbox', '--status', 'done'], as(bob));
      expect(badStatus.code).toBe(EXIT.usage);
      const noAction = await agentrelay(['send', frank.agent.handle, 'x', '--intent', 'propose_action'], as(bob));
      expect(noAction.code).toBe(EXIT.usage);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'declines, asks for input, cancels and proposes actions',
    async () => {
      const env = { RELAY_URL: relay.url };
      const cli = async (agent: RegisteredTestAgent, argv: string[]): Promise<Outcome> => {
        let stdout = '';
        let stderr = '';
        const code = await run(argv, { ...env, AGENTRELAY_API_KEY: agent.api_key }, { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text) });
        return { code, stdout, stderr };
      };
      const taskOf = (outcome: Outcome): string => (JSON.parse(outcome.stdout) as { task_id: string }).task_id;

      const declined = taskOf(await cli(bob, ['send', frank.agent.handle, 'Rewrite in Rust', '--json']));
      expect((await cli(frank, ['decline', declined, 'Out of scope'])).stdout).toBe(`Declined ${declined} (rejected).\n`);
      expect(JSON.parse((await cli(bob, ['show', declined, '--json'])).stdout)).toMatchObject({ status: { state: 'rejected' }, reason: 'Out of scope' });

      const proposal = await cli(bob, [
        'send',
        frank.agent.handle,
        'Use the paginated API in UsersTable',
        '--action',
        'Read next_cursor in UsersTable',
        '--target',
        'apps/web/UsersTable.tsx',
        '--rationale',
        'The API is paginated now',
        '--ref',
        'apps/web/UsersTable.tsx:10-40',
        '--link',
        'https://example.com/api',
        '--json',
      ]);
      expect(proposal.code).toBe(EXIT.ok);
      const proposed = taskOf(proposal);
      const proposedTask = JSON.parse((await cli(frank, ['show', proposed, '--json'])).stdout) as Task;
      expect(proposedTask).toMatchObject({
        intent: 'propose_action',
        proposed_action: { description: 'Read next_cursor in UsersTable', target_files: ['apps/web/UsersTable.tsx'], rationale: 'The API is paginated now' },
        artifacts: [
          { type: 'file_ref', path: 'apps/web/UsersTable.tsx', line_start: 10, line_end: 40 },
          { type: 'link', url: 'https://example.com/api' },
        ],
      });
      await cli(frank, ['accept', proposed]);
      expect((await cli(frank, ['request-input', proposed, 'Page size?'])).code).toBe(EXIT.ok);
      expect((await cli(bob, ['sent', '--status', 'input_required'])).stdout).toContain(proposed);
      await cli(bob, ['reply', proposed, '50']);
      expect((JSON.parse((await cli(frank, ['show', proposed, '--json'])).stdout) as Task).status.state).toBe('accepted');
      const notYours = await cli(bob, ['complete', proposed, 'I did it']);
      expect(notYours.code).toBe(EXIT.conflict);
      expect(notYours.stderr).toContain('not_authorized_transition');

      const withdrawn = taskOf(await cli(bob, ['send', frank.agent.handle, 'Never mind', '--json']));
      expect((await cli(bob, ['cancel', withdrawn])).stdout).toBe(`Cancelled ${withdrawn}.\n`);
      expect((await cli(bob, ['cancel', proposed])).code).toBe(EXIT.conflict);

      // `show <handle>` is still the admin command.
      let adminOut = '';
      const admin = await run(
        ['show', frank.agent.handle],
        { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
        { stdout: (text) => (adminOut += text), stderr: () => undefined },
      );
      expect(admin).toBe(EXIT.ok);
      expect(adminOut).toContain(`${frank.agent.handle}\n  id:`);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'watches the inbox and prints threads as they arrive and change',
    async () => {
      const carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol' });
      let stdout = '';
      const stop = new AbortController();
      const watching = run(
        // An hour between looks: every change below can only come from the live inbox stream.
        ['inbox', '--watch', '--interval', '3600'],
        { RELAY_URL: relay.url, AGENTRELAY_API_KEY: carol.api_key },
        {
          stdout: (text) => (stdout += text),
          stderr: (text) => (stdout += text),
          signal: stop.signal,
        },
      );
      try {
        await eventually(() => expect(stdout).toContain('No matching handoffs.\nWatching for changes live'), 20000);
        let outcome = '';
        await run(
          ['send', carol.agent.handle, 'Please review the schema', '--json'],
          { RELAY_URL: relay.url, AGENTRELAY_API_KEY: bob.api_key },
          { stdout: (text) => (outcome += text), stderr: () => undefined },
        );
        const taskId = (JSON.parse(outcome) as { task_id: string }).task_id;
        await eventually(
          () =>
            expect(stdout).toMatch(
              new RegExp(`new\\s+${taskId} \\[pending\\] from ${bob.agent.handle.replace('.', '\\.')}, 1 unread: Please review the schema`),
            ),
          20000,
        );
        await run(['accept', taskId], { RELAY_URL: relay.url, AGENTRELAY_API_KEY: carol.api_key }, { stdout: () => undefined, stderr: () => undefined });
        await eventually(() => expect(stdout).toMatch(new RegExp(`changed\\s+${taskId} \\[accepted\\]`)), 20000);
      } finally {
        stop.abort();
      }
      await expect(watching).resolves.toBe(EXIT.ok);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    "prints another agent's title, message, name and artifact in inbox, show and search without its escapes, CRs or invisible characters",
    async () => {
      const { clearScreen, retitle, carriageReturn, hiddenInstruction, rightToLeftOverride, popDirection, nextLine, lineSeparator, zeroWidthSpace } = HOSTILE;
      const mallory = await registerAgent(relay, { handle: uniqueHandle('mallory', org), name: `Mallory${clearScreen}${carriageReturn}Trusted Admin` });
      const gina = await registerAgent(relay, { handle: uniqueHandle('gina', org), name: 'Gina' });
      const title = `Quarterly${clearScreen}${retitle} numbers${carriageReturn}${bob.agent.handle}${hiddenInstruction} ${rightToLeftOverride}txt.exe${popDirection}`;
      const text = `${title}${nextLine}second line${lineSeparator}third${zeroWidthSpace}line`;
      const cli = async (agent: RegisteredTestAgent, argv: string[]): Promise<Outcome> => {
        let stdout = '';
        let stderr = '';
        const code = await run(
          argv,
          { RELAY_URL: relay.url, AGENTRELAY_API_KEY: agent.api_key },
          { stdout: (out) => (stdout += out), stderr: (err) => (stderr += err) },
        );
        return { code, stdout, stderr };
      };
      const sent = await cli(mallory, ['send', gina.agent.handle, text, '--ref', `src/report${rightToLeftOverride}fdp.ts:1-2`, '--json']);
      expect(sent.code).toBe(EXIT.ok);
      const taskId = (JSON.parse(sent.stdout) as { task_id: string }).task_id;
      expect((await cli(mallory, ['reply', taskId, `Also${retitle}:${carriageReturn}overwritten${nextLine}next`])).code).toBe(EXIT.ok);

      // The real process: the bytes a terminal receives.
      const inbox = await agentrelay(['inbox'], as(gina));
      expect(inbox.code).toBe(EXIT.ok);
      expect(forbiddenCharacters(inbox.stdout)).toEqual([]);
      const rows = inbox.stdout.split('\n');
      expect(rows).toHaveLength(4);
      expect(rows[1]).toMatch(new RegExp(`^${taskId}\\s+pending\\s+${mallory.agent.handle.replace('.', '\\.')}\\s+inform\\s+2\\s`));
      // The CR starts a line of its own: the row shows the first line and marks that more follows.
      expect(rows[1]).toMatch(/\sQuarterly\[2J\]0;pwned numbers …$/);
      expect(rows[2]).toBe('1 thread, 2 unread messages.');

      const shown = await cli(gina, ['show', taskId]);
      expect(shown.code).toBe(EXIT.ok);
      expect(forbiddenCharacters(shown.stdout)).toEqual([]);
      expect(shown.stdout).toContain(`From ${mallory.agent.handle} (Mallory[2J Trusted Admin) to ${gina.agent.handle}`);
      expect(shown.stdout).toContain('- file_ref src/reportfdp.ts:1-2');
      expect(shown.stdout).toContain(`  Quarterly[2J]0;pwned numbers\n  ${bob.agent.handle} txt.exe\n  second line\n  thirdline\n`);
      expect(shown.stdout).toContain('  Also]0;pwned:\n  overwritten\n  next\n');

      const found = await eventually(async () => {
        const outcome = await cli(gina, ['search', 'Quarterly', 'numbers']);
        expect(outcome.stdout).toContain(taskId);
        return outcome;
      }, 20000);
      expect(found.code).toBe(EXIT.ok);
      expect(forbiddenCharacters(found.stdout)).toEqual([]);
      const [hit, ...highlights] = found.stdout.trimEnd().split('\n');
      expect(hit).toContain(`- ${taskId} [pending] from ${mallory.agent.handle} (inform, updated `);
      expect(hit).toMatch(/: Quarterly\[2J\]0;pwned numbers …$/);
      expect(highlights.length).toBeGreaterThan(0);
      for (const line of highlights) expect(line).toMatch(/^ {4}(message #\d+|artifact \S.*): /);
      expect(highlights.join('\n')).toContain('«Quarterly»');
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
