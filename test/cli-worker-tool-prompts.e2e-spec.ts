import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RelayClient, type Task, type TaskMessage } from '@app/relay-client';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));
const PROCESS_TEST_TIMEOUT_MS = 300_000;
const SETTLE_MS = 120_000;

/**
 * Stands in for `claude -p --settings "$AGENTRELAY_CLAUDE_SETTINGS"`: reads the settings file the
 * worker wrote, and before each tool of its plan runs the PreToolUse command hooks exactly as
 * Claude Code does (through the shell, the documented hook JSON on stdin, within the hook's
 * timeout) and obeys the output: `permissionDecision` allow runs the tool, deny does not (the
 * reason goes back to the model); no decision leaves it to its own rules, under which `claude -p`
 * runs only read-only tools. It prints what happened to each tool.
 */
const FAKE_CLAUDE = `import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
const settings = JSON.parse(readFileSync(process.env.AGENTRELAY_CLAUDE_SETTINGS, 'utf8'));
const plan = JSON.parse(process.env.TOOL_PLAN);
const READ_ONLY = ['Read', 'Glob', 'Grep', 'LS'];
const lines = [];
for (const [index, call] of plan.entries()) {
  let decision = null;
  let reason = '';
  for (const group of settings.hooks.PreToolUse ?? []) {
    if (group.matcher && group.matcher !== '*' && !new RegExp('^(?:' + group.matcher + ')$').test(call.tool_name)) continue;
    for (const hook of group.hooks) {
      const input = {
        session_id: 'fake-session',
        transcript_path: '/tmp/fake-session.jsonl',
        cwd: process.cwd(),
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: call.tool_name,
        tool_input: call.tool_input,
        tool_use_id: 'toolu_' + index,
      };
      const stdout = execFileSync('/bin/sh', ['-c', hook.command], { input: JSON.stringify(input), timeout: hook.timeout * 1000, encoding: 'utf8' });
      if (stdout.trim() === '') continue;
      const output = JSON.parse(stdout).hookSpecificOutput;
      if (output.hookEventName !== 'PreToolUse') throw new Error('hook answered for ' + output.hookEventName);
      decision = output.permissionDecision;
      reason = output.permissionDecisionReason ?? '';
    }
  }
  if (decision === null) decision = READ_ONLY.includes(call.tool_name) ? 'allow' : 'deny';
  lines.push(call.tool_name + ' ' + JSON.stringify(call.tool_input) + ': ' + (decision === 'allow' ? 'ran' : 'denied (' + reason + ')'));
}
console.log(lines.join('\\n'));
`;

/**
 * Stands in for `codex exec -c "$AGENTRELAY_CODEX_HOOKS"`: takes the hook from the inline
 * `hooks.PreToolUse` table of its -c override and runs it before each tool with Codex's hook JSON
 * (with `turn_id`); a `permissionDecision` deny blocks the tool, anything else leaves it to
 * its approval policy (never, in exec) and sandbox, so it runs.
 */
const FAKE_CODEX = `import { execFileSync } from 'node:child_process';
const override = process.argv[process.argv.indexOf('-c') + 1];
if (!override.startsWith('hooks.PreToolUse=[')) throw new Error('not a PreToolUse override: ' + override);
const command = JSON.parse(/command=("(?:[^"\\\\]|\\\\.)*")/.exec(override)[1]);
const timeout = Number(/timeout=(\\d+)/.exec(override)[1]);
const plan = JSON.parse(process.env.TOOL_PLAN);
const lines = [];
for (const [index, call] of plan.entries()) {
  const input = {
    session_id: 'codex-session',
    turn_id: 'turn-' + index,
    transcript_path: null,
    cwd: process.cwd(),
    model: 'gpt-5-codex',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: call.tool_name,
    tool_input: call.tool_input,
    tool_use_id: 'call_' + index,
  };
  const stdout = execFileSync('/bin/sh', ['-c', command], { input: JSON.stringify(input), timeout: timeout * 1000, encoding: 'utf8' });
  const output = stdout.trim() === '' ? {} : JSON.parse(stdout).hookSpecificOutput;
  const blocked = output.permissionDecision === 'deny';
  lines.push(call.tool_name + ': ' + (blocked ? 'blocked (' + output.permissionDecisionReason + ')' : 'ran'));
}
console.log(lines.join('\\n'));
`;

class WorkerProcess {
  stderr = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    child.stderr?.on('data', (chunk: Buffer) => (this.stderr += chunk.toString('utf8')));
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  async stop(): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }
}

interface A2aMessage {
  role: string;
  parts: Array<{ kind: string; text?: string; data?: Record<string, unknown> }>;
  metadata?: Record<string, unknown>;
}

describe('agentrelay worker: tool prompts of the coding agent become questions on the handoff', () => {
  let relay: RelayHarness;
  let dir: string;
  let bob: RegisteredTestAgent;
  let bobClient: RelayClient;
  const processes: WorkerProcess[] = [];
  const org = `prompts${Math.random().toString(36).slice(2, 7)}`;

  const startWorker = (agent: RegisteredTestAgent, args: string[], plan: unknown[], command = `node ${join(dir, 'fake-claude.mjs')}`): WorkerProcess => {
    const child = spawn(process.execPath, ['--import', REGISTER_TS, 'apps/cli/src/main.ts', 'worker', '--exec', command, ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', RELAY_URL: relay.url, AGENTRELAY_API_KEY: agent.api_key, TOOL_PLAN: JSON.stringify(plan) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const worker = new WorkerProcess(child);
    processes.push(worker);
    return worker;
  };

  const settled = (taskId: string, worker: WorkerProcess): Promise<Task> =>
    eventually(
      async () => {
        const thread = await bobClient.getTask(taskId);
        if (!['completed', 'failed'].includes(thread.status.state))
          throw new Error(`${taskId} is ${thread.status.state}; the worker said:\n${worker.stderr.slice(-3000)}`);
        return thread;
      },
      SETTLE_MS,
      250,
    );

  /** The newest permission question of the thread about `toolName` not yet answered, as its sender reads it. */
  const question = (taskId: string, toolName: string, seen: Set<string>, worker: WorkerProcess): Promise<{ message: TaskMessage; requestId: string }> =>
    eventually(
      async () => {
        const thread = await bobClient.getTask(taskId);
        for (const message of thread.messages) {
          const request = message.payload.permission_request as { request_id: string; tool_name: string } | undefined;
          if (request?.tool_name === toolName && !seen.has(request.request_id)) {
            seen.add(request.request_id);
            return { message, requestId: request.request_id };
          }
        }
        throw new Error(`no new question about ${toolName} on ${taskId} (${thread.status.state}); the worker said:\n${worker.stderr.slice(-2000)}`);
      },
      SETTLE_MS,
      250,
    );

  beforeAll(async () => {
    relay = await RelayHarness.start();
    dir = await mkdtemp(join(tmpdir(), 'agentrelay-tool-prompts-e2e-'));
    await writeFile(join(dir, 'fake-claude.mjs'), FAKE_CLAUDE);
    await writeFile(join(dir, 'fake-codex.mjs'), FAKE_CODEX);
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
    bobClient = new RelayClient({ url: relay.url, apiKey: bob.api_key });
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    for (const worker of processes) worker.child.kill('SIGKILL');
    await relay?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it(
    'runs a pre-approved tool without asking, an allowed one after the sender allowed it, and not one the sender denied; the exchange is in the thread',
    async () => {
      const frank = await registerAgent(relay, { handle: uniqueHandle('frank', org), name: 'Frank' });
      const worker = startWorker(
        frank,
        [],
        [
          { tool_name: 'Read', tool_input: { file_path: 'README.md' } },
          { tool_name: 'Bash', tool_input: { command: 'npm test', description: 'Run the tests' } },
          { tool_name: 'Write', tool_input: { file_path: '/etc/hosts', content: '127.0.0.1 evil' } },
        ],
      );
      const { task_id: taskId } = await bobClient.createTask({ recipient: frank.agent.handle, text: 'Run the tests' });
      const seen = new Set<string>();

      const bash = await question(taskId, 'Bash', seen, worker);
      expect(bash.message.from).toBe(frank.agent.handle);
      expect(bash.message.body).toMatch(
        /^Permission needed: Claude Code wants to use Bash \(\{"command":"npm test","description":"Run the tests"\}\)\. Reply "allow ([0-9a-f-]{36})" or "deny \1: <reason>" \(or send a permission_answer\) within 5m; no answer denies it\.$/,
      );
      expect(bash.message.payload.permission_request).toEqual({
        kind: 'permission_request',
        request_id: bash.requestId,
        tool_name: 'Bash',
        tool_input: { command: 'npm test', description: 'Run the tests' },
        client: 'claude-code',
        hook_event: 'PreToolUse',
        expires_at: expect.any(String),
      });
      // The sender answers in A2A: a data part.
      await bobClient.call('message/send', {
        message: {
          kind: 'message',
          role: 'user',
          messageId: `answer-${bash.requestId}`,
          taskId,
          parts: [
            { kind: 'text', text: 'Yes, run the tests.' },
            { kind: 'data', data: { kind: 'permission_answer', request_id: bash.requestId, decision: 'allow' } },
          ],
        },
        configuration: { blocking: false },
      });

      const write = await question(taskId, 'Write', seen, worker);
      // … and in the relay's own dialect: the answer in the message's payload.
      await bobClient.call('message/send', {
        task_id: taskId,
        message: {
          parts: [{ type: 'text', text: 'No, leave /etc/hosts alone.' }],
          payload: { permission_answer: { request_id: write.requestId, decision: 'deny', reason: 'Not outside the repository.' } },
        },
        metadata: { client_idempotency_key: `answer-${write.requestId}` },
      });

      const thread = await settled(taskId, worker);
      expect(thread.status.state).toBe('completed');
      expect(thread.result_summary).toBe(
        [
          'Read {"file_path":"README.md"}: ran',
          'Bash {"command":"npm test","description":"Run the tests"}: ran',
          'Write {"file_path":"/etc/hosts","content":"127.0.0.1 evil"}: denied (Not outside the repository.)',
        ].join('\n'),
      );
      // Read was never asked about.
      expect(thread.messages.filter((message) => message.payload.permission_request !== undefined)).toHaveLength(2);

      // The A2A history holds the exchange as data parts.
      const a2a = await bobClient.call<{ history: A2aMessage[] }>('tasks/get', { id: taskId });
      const data = a2a.history.flatMap((message) =>
        message.parts.filter((part) => part.kind === 'data').map((part) => ({ role: message.role, data: part.data })),
      );
      expect(data).toEqual([
        { role: 'agent', data: expect.objectContaining({ kind: 'permission_request', request_id: bash.requestId, tool_name: 'Bash' }) },
        { role: 'user', data: { kind: 'permission_answer', request_id: bash.requestId, decision: 'allow' } },
        { role: 'agent', data: expect.objectContaining({ kind: 'permission_request', request_id: write.requestId, tool_name: 'Write' }) },
      ]);
      expect(a2a.history.find((message) => message.metadata?.permission_answer)?.metadata?.permission_answer).toEqual({
        request_id: write.requestId,
        decision: 'deny',
        reason: 'Not outside the repository.',
      });

      // The admin timeline has the questions and the answers in order.
      const admin = await fetch(`${relay.url}/admin/tasks/${taskId}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      const { timeline } = (await admin.json()) as { timeline: Array<{ event: string; actor: string; message?: { body: string } }> };
      const appended = timeline.filter((entry) => entry.event === 'message_appended').map((entry) => [entry.actor, entry.message?.body.split(' (')[0]]);
      expect(appended).toEqual(
        expect.arrayContaining([
          [frank.agent.handle, 'Permission needed: Claude Code wants to use Bash'],
          [bob.agent.handle, 'Yes, run the tests.'],
          [frank.agent.handle, 'Permission needed: Claude Code wants to use Write'],
          [bob.agent.handle, 'No, leave /etc/hosts alone.'],
        ]),
      );
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'denies a tool nobody answers about within --permission-timeout, and says so on the handoff',
    async () => {
      const frank = await registerAgent(relay, { handle: uniqueHandle('frank', org), name: 'Frank' });
      const worker = startWorker(frank, ['--permission-timeout', '3s', '--allow-tools', ''], [{ tool_name: 'Read', tool_input: { file_path: 'a.txt' } }]);
      const { task_id: taskId } = await bobClient.createTask({ recipient: frank.agent.handle, text: 'Read a file' });
      const asked = await question(taskId, 'Read', new Set(), worker);
      expect(asked.message.body).toContain('within 3s; no answer denies it.');

      const thread = await settled(taskId, worker);
      expect(thread.status.state).toBe('completed');
      const reason = `No answer to request ${asked.requestId} within 3s: denied.`;
      expect(thread.result_summary).toBe(`Read {"file_path":"a.txt"}: denied (${reason})`);
      expect(thread.messages.map((message) => message.body)).toContain(`Read: ${reason}`);
      const a2a = await bobClient.call<{ history: A2aMessage[] }>('tasks/get', { id: taskId });
      expect(a2a.history.flatMap((message) => message.parts.filter((part) => part.kind === 'data').map((part) => part.data))).toContainEqual({
        kind: 'permission_timeout',
        request_id: asked.requestId,
        decision: 'deny',
      });
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'asks for Codex too, through its -c hooks override: an allowed tool runs, a denied one is blocked',
    async () => {
      const frank = await registerAgent(relay, { handle: uniqueHandle('frank', org), name: 'Frank' });
      const worker = startWorker(
        frank,
        [],
        [
          { tool_name: 'Bash', tool_input: { command: 'cargo test' } },
          { tool_name: 'apply_patch', tool_input: { command: '*** Begin Patch' } },
        ],
        `node ${join(dir, 'fake-codex.mjs')} -c "$AGENTRELAY_CODEX_HOOKS"`,
      );
      const { task_id: taskId } = await bobClient.createTask({ recipient: frank.agent.handle, text: 'Test the crate' });
      const seen = new Set<string>();
      const bash = await question(taskId, 'Bash', seen, worker);
      expect(bash.message.body).toMatch(/^Permission needed: Codex wants to use Bash \(\{"command":"cargo test"\}\)\./);
      expect(bash.message.payload.permission_request).toMatchObject({ client: 'codex', hook_event: 'PreToolUse', tool_input: { command: 'cargo test' } });
      const answer = (requestId: string, decision: string): Promise<unknown> =>
        bobClient.call('message/send', {
          task_id: taskId,
          message: {
            parts: [
              { type: 'text', text: decision },
              { type: 'data', data: { kind: 'permission_answer', request_id: requestId, decision } },
            ],
          },
          metadata: { client_idempotency_key: `answer-${requestId}` },
        });
      // A text reply from the CLI (what MCP's reply tool sends too) answers as well.
      const io = { stdout: () => undefined, stderr: () => undefined };
      expect(await run(['reply', taskId, `allow ${bash.requestId}`], { RELAY_URL: relay.url, AGENTRELAY_API_KEY: bob.api_key }, io)).toBe(EXIT.ok);
      const patch = await question(taskId, 'apply_patch', seen, worker);
      await answer(patch.requestId, 'deny');

      const thread = await settled(taskId, worker);
      expect(thread.result_summary).toBe('Bash: ran\napply_patch: blocked (Denied by the sender of the handoff.)');
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
