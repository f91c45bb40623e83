import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RelayClient, type Task, type TaskMessage } from '@app/relay-client';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { FAKE_CLAUDE, FAKE_CODEX, startWorker as spawnWorker, type WorkerProcess } from './support/fake-coding-agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const PROCESS_TEST_TIMEOUT_MS = 300_000;
const SETTLE_MS = 120_000;

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
    const worker = spawnWorker(relay.url, agent.api_key, command, args, plan);
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
