import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { RelayClient, type Task, type TaskMessage } from '@app/relay-client';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { consoleOidcEnv, isSignedIn, registerConsoleClient, signInWithOidc, startConsoleProvider, type OidcSignIn } from './support/console-oidc';
import { eventually } from './support/eventually';
import { FAKE_CLAUDE, startWorker, type WorkerProcess } from './support/fake-coding-agents';
import type { Json } from './support/json-rpc';
import type { TestOpenIdProvider } from './support/openid-provider';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const PROCESS_TEST_TIMEOUT_MS = 300_000;
const SETTLE_MS = 120_000;
const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const people = {
  approver: { sub: 'ann', claims: { email: 'ann@acme.test', name: 'Ann Approver', agentrelay_role: 'approver' } },
  owner: { sub: 'owen', claims: { email: 'owen@partner.test', name: 'Owen Owner', agentrelay_role: 'approver' } },
  viewer: { sub: 'vera', claims: { email: 'vera@acme.test', name: 'Vera Viewer', agentrelay_role: 'viewer' } },
};

/**
 * Tool prompts answered by people (docs/decisions/0031-tool-prompts-answered-by-people.md): a
 * tool-prompt rule of the recipient's trust policy gives the tool prompts of handoffs from another
 * org to the approvers. The recipient's worker then asks them, not the sender (whose answers it
 * ignores); an approver answers through the admin API (a viewer may not; four eyes refuses the
 * sending agent's owner and the admin token); the answers are on the task and in both audits.
 */
describe('tool prompts answered by people, as the trust policy says', () => {
  let provider: TestOpenIdProvider;
  let relay: RelayHarness;
  let dir: string;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let tess: RegisteredTestAgent;
  let bobClient: RelayClient;
  const sessions = {} as Record<keyof typeof people, OidcSignIn>;
  const workers: WorkerProcess[] = [];
  const rule = { name: 'outside senders', outside_org: true, four_eyes: true };

  beforeAll(async () => {
    provider = await startConsoleProvider(Object.values(people));
    relay = await RelayHarness.start({ env: consoleOidcEnv(provider) });
    registerConsoleClient(provider, relay.url);
    for (const role of Object.keys(people) as Array<keyof typeof people>) {
      const result = await signInWithOidc(relay.url, people[role].sub);
      if (!isSignedIn(result)) throw new Error(`signing in as ${role} answered ${result.status}: ${result.body}`);
      sessions[role] = result;
    }
    dir = await mkdtemp(join(tmpdir(), 'agentrelay-tool-prompt-approvers-e2e-'));
    await writeFile(join(dir, 'fake-claude.mjs'), FAKE_CLAUDE);
    const suffix = randomUUID().slice(0, 6);
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops' });
    tess = await registerAgent(relay, { handle: `tess@acme${suffix}`, name: 'Tess' });
    bob = await registerAgent(relay, { handle: `bob@partner${suffix}`, name: 'Bob', email: 'owen@partner.test', owner: { subject: 'owen' } });
    bobClient = new RelayClient({ url: relay.url, apiKey: bob.api_key });
    const policy = await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ allow: [`*@partner${suffix}`], tool_prompts: [rule] })
      .expect(200);
    expect(policy.body).toMatchObject({ hold: [], tool_prompts: [rule] });
  }, PROCESS_TEST_TIMEOUT_MS);

  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await relay?.stop();
    await provider?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const as = (session: OidcSignIn) => ({ cookie: session.cookie, 'x-csrf-token': session.csrf });
  const answerPath = (taskId: string, requestId: string, decision: 'allow' | 'deny') => `/admin/approvals/${taskId}/tool-prompts/${requestId}/${decision}`;

  /** The next question of the task about `toolName`, as its sender reads it. */
  const question = (taskId: string, toolName: string, worker: WorkerProcess): Promise<{ message: TaskMessage; requestId: string }> =>
    eventually(
      async () => {
        const task = await bobClient.getTask(taskId);
        for (const message of task.messages) {
          const asked = message.payload.permission_request as { request_id: string; tool_name: string } | undefined;
          if (asked?.tool_name === toolName) return { message, requestId: asked.request_id };
        }
        throw new Error(`no question about ${toolName} on ${taskId} (${task.status.state}); the worker said:\n${worker.stderr.slice(-2000)}`);
      },
      SETTLE_MS,
      250,
    );

  const settled = (taskId: string, worker: WorkerProcess): Promise<Task> =>
    eventually(
      async () => {
        const task = await bobClient.getTask(taskId);
        if (!['completed', 'failed'].includes(task.status.state))
          throw new Error(`${taskId} is ${task.status.state}; the worker said:\n${worker.stderr.slice(-3000)}`);
        return task;
      },
      SETTLE_MS,
      250,
    );

  it(
    'asks the approvers instead of the sender; a viewer, the owner and the admin token may not answer; the approver’s answers decide and are audited',
    async () => {
      const worker = startWorker(
        relay.url,
        ops.api_key,
        `node ${join(dir, 'fake-claude.mjs')}`,
        [],
        [
          { tool_name: 'Bash', tool_input: { command: 'npm test' } },
          { tool_name: 'Write', tool_input: { file_path: '/etc/hosts', content: '127.0.0.1 evil' } },
        ],
      );
      workers.push(worker);
      const { task_id: taskId } = await bobClient.createTask({ recipient: ops.agent.handle, text: 'Run the tests' });
      const created = await request(relay.url).get(`/admin/tasks/${taskId}`).set(admin).expect(200);
      expect(created.body.task.tool_prompts).toEqual({ answered_by: 'approvers', rule: 'outside senders', four_eyes: true, answers: [] });

      const bash = await question(taskId, 'Bash', worker);
      expect(bash.message.body).toContain(`an approver answers request ${bash.requestId} in the console (Approvals)`);
      expect(bash.message.payload.permission_request).toMatchObject({ request_id: bash.requestId, tool_name: 'Bash', answered_by: 'approvers' });
      // The sender's own answer is not one: the relay's record of the approvers' answers is.
      await bobClient.appendMessage(taskId, `allow ${bash.requestId}`);

      const queue = await request(relay.url).get('/admin/approvals/tool-prompts').set(as(sessions.viewer)).expect(200);
      expect(queue.body.items).toContainEqual(
        expect.objectContaining({
          task_id: taskId,
          sender: bob.agent.handle,
          recipient: ops.agent.handle,
          rule: 'outside senders',
          four_eyes: true,
          request: expect.objectContaining({ request_id: bash.requestId, tool_name: 'Bash', tool_input: { command: 'npm test' } }),
        }),
      );
      const byViewer = await request(relay.url)
        .post(answerPath(taskId, bash.requestId, 'allow'))
        .set(as(sessions.viewer))
        .send({})
        .expect(403);
      expect(byViewer.body.error.reason).toBe('role_forbidden');
      const byOwner = await request(relay.url)
        .post(answerPath(taskId, bash.requestId, 'allow'))
        .set(as(sessions.owner))
        .send({})
        .expect(403);
      expect(byOwner.body.error).toMatchObject({ reason: 'four_eyes', data: { refusal: 'owner', owner: { subject: 'owen' } } });
      const byToken = await request(relay.url)
        .post(answerPath(taskId, bash.requestId, 'allow'))
        .set(admin)
        .send({})
        .expect(403);
      expect(byToken.body.error.reason).toBe('four_eyes');
      const unknown = await request(relay.url)
        .post(answerPath(taskId, randomUUID(), 'allow'))
        .set(as(sessions.approver))
        .send({})
        .expect(404);
      expect(unknown.body.error.reason).toBe('tool_prompt_not_found');

      const allowed = await request(relay.url)
        .post(answerPath(taskId, bash.requestId, 'allow'))
        .set(as(sessions.approver))
        .send({ reason: 'Tests are fine.' })
        .expect(200);
      expect(allowed.body.tool_prompts.answers).toEqual([
        { request_id: bash.requestId, decision: 'allow', reason: 'Tests are fine.', answered_by: 'ann@acme.test', answered_at: expect.any(String) },
      ]);
      const again = await request(relay.url)
        .post(answerPath(taskId, bash.requestId, 'deny'))
        .set(as(sessions.approver))
        .send({})
        .expect(409);
      expect(again.body.error.reason).toBe('tool_prompt_closed');

      const write = await question(taskId, 'Write', worker);
      // Had the worker taken the sender's word, this would run.
      await bobClient.appendMessage(taskId, `allow ${write.requestId}`);
      await request(relay.url)
        .post(answerPath(taskId, write.requestId, 'deny'))
        .set(as(sessions.approver))
        .send({ reason: 'Not outside the repository.' })
        .expect(200);

      const task = await settled(taskId, worker);
      expect(task.result_summary).toBe(
        ['Bash {"command":"npm test"}: ran', 'Write {"file_path":"/etc/hosts","content":"127.0.0.1 evil"}: denied (Not outside the repository.)'].join('\n'),
      );
      // Nothing is left in the queue, and the sender's A2A view says who answered.
      const after = await request(relay.url).get('/admin/approvals/tool-prompts').set(as(sessions.approver)).expect(200);
      expect(after.body.items.filter((item: Json) => item.task_id === taskId)).toEqual([]);
      const a2a = await bobClient.call<{ metadata: { relay: { toolPrompts: Json } } }>('tasks/get', { id: taskId, historyLength: 0 });
      expect(a2a.metadata.relay.toolPrompts).toMatchObject({
        answeredBy: 'approvers',
        rule: 'outside senders',
        answers: [
          { requestId: bash.requestId, decision: 'allow', answeredBy: 'ann@acme.test' },
          { requestId: write.requestId, decision: 'deny', reason: 'Not outside the repository.', answeredBy: 'ann@acme.test' },
        ],
      });

      const detail = await request(relay.url).get(`/admin/tasks/${taskId}`).set(admin).expect(200);
      expect(detail.body.audit.filter((row: Json) => String(row.action).endsWith('_tool')).map((row: Json) => [row.action, row.actor])).toEqual([
        ['allow_tool', 'ann@acme.test'],
        ['deny_tool', 'ann@acme.test'],
      ]);
      const audit = await request(relay.url).get('/admin/audit?limit=200').set(admin).expect(200);
      expect(audit.body.items.find((row: Json) => row.action === 'tool_prompt.deny' && row.target === taskId)).toMatchObject({
        actor_sub: 'ann',
        actor_email: 'ann@acme.test',
        detail: { rule: 'outside senders', request_id: write.requestId, reason: 'Not outside the repository.' },
      });
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it(
    'leaves a teammate’s handoff to its sender (no rule matched), and lists and answers from the CLI',
    async () => {
      const tessClient = new RelayClient({ url: relay.url, apiKey: tess.api_key });
      const { task_id: teammateTask } = await tessClient.createTask({ recipient: ops.agent.handle, text: 'Lint it' });
      const teammateView = await request(relay.url).get(`/admin/tasks/${teammateTask}`).set(admin).expect(200);
      expect(teammateView.body.task.tool_prompts).toBeNull();
      const refused = await request(relay.url)
        .post(answerPath(teammateTask, randomUUID(), 'allow'))
        .set(as(sessions.approver))
        .send({})
        .expect(409);
      expect(refused.body.error.reason).toBe('not_for_approvers');
      // Withdrawn before a worker of ops could take it.
      await tessClient.cancel(teammateTask);

      // The CLI (the admin token) reads the queue; a rule without four eyes lets it answer.
      await request(relay.url)
        .put(`/admin/agents/${ops.agent.handle}/trust`)
        .set(admin)
        .send({ allow: [`*@${bob.agent.handle.split('@')[1]}`], tool_prompts: [{ name: 'outside senders', outside_org: true }] })
        .expect(200);
      const worker = startWorker(relay.url, ops.api_key, `node ${join(dir, 'fake-claude.mjs')}`, [], [{ tool_name: 'Bash', tool_input: { command: 'make' } }]);
      workers.push(worker);
      const { task_id: taskId } = await bobClient.createTask({ recipient: ops.agent.handle, text: 'Build it' });
      const bash = await question(taskId, 'Bash', worker);
      const env = { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN };
      let out = '';
      const io = { stdout: (text: string) => (out += text), stderr: (text: string) => (out += text) };
      expect(await run(['approvals', 'tool-prompts'], env, io)).toBe(EXIT.ok);
      expect(out).toMatch(
        new RegExp(`${taskId}\\s+${bash.requestId}\\s+${ops.agent.handle.replace('.', '\\.')}\\s+Bash\\s+\\{"command":"make"\\}\\s+outside senders`),
      );
      out = '';
      expect(await run(['approvals', 'allow-tool', taskId, bash.requestId, '--reason', 'ok'], env, io)).toBe(EXIT.ok);
      expect(out).toContain(`Allowed tool prompt ${bash.requestId} of ${taskId}`);
      expect(await run(['approvals', 'deny-tool', taskId, bash.requestId], env, io)).toBe(EXIT.conflict);
      const task = await settled(taskId, worker);
      expect(task.result_summary).toBe('Bash {"command":"make"}: ran');
      expect(await worker.stop()).toBe(0);
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
