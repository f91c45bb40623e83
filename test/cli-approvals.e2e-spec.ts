import { randomUUID } from 'node:crypto';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { ok, rpc, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import request from 'supertest';

interface Captured {
  code: number;
  stdout: string;
  stderr: string;
}

const DIFF = ['--- a/db/migrations/042.sql', '+++ b/db/migrations/042.sql', '@@ -1 +1,2 @@', ' -- users', '+ALTER TABLE users ADD COLUMN plan text;', ''].join(
  '\n',
);

/**
 * `agentrelay approvals list|show|approve|deny` against a running relay (docs/operations.md#approvals):
 * the queue, a held handoff's content, an approval that delivers it, a deny that tells the sender
 * the reason, and the refusals each with its exit code.
 */
describe('agentrelay approvals', () => {
  let relay: RelayHarness;
  let ops: RegisteredTestAgent;
  let sec: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  const suffix = randomUUID().slice(0, 6);

  beforeAll(async () => {
    relay = await RelayHarness.start();
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops' });
    sec = await registerAgent(relay, { handle: `sec@acme${suffix}`, name: 'Sec' });
    bob = await registerAgent(relay, { handle: `bob@partner${suffix}`, name: 'Bob', email: 'bob@partner.test' });
    const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ allow: [`*@partner${suffix}`], hold: [{ name: 'migrations', paths: ['db/migrations/**'] }] })
      .expect(200);
    await request(relay.url)
      .put(`/admin/agents/${sec.agent.handle}/trust`)
      .set(admin)
      .send({ allow: [`*@partner${suffix}`], hold: [{ name: 'external', outside_org: true, four_eyes: true }] })
      .expect(200);
  });

  afterAll(async () => {
    await relay?.stop();
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

  const sendMigration = async (recipient: RegisteredTestAgent, text: string): Promise<string> => {
    const sent = await ok(relay.url, bob.api_key, 'message/send', {
      recipient: recipient.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text }] },
      intent: 'propose_action',
      proposed_action: { description: 'add the plan column', target_files: ['db/migrations/042.sql'], rationale: 'billing needs it' },
      artifacts: [{ type: 'file_diff', path: 'db/migrations/042.sql', diff: DIFF }],
    });
    expect(sent.status.state).toBe('held');
    return sent.task_id as string;
  };

  it('lists the held handoffs and shows one with its content', async () => {
    const taskId = await sendMigration(ops, 'Please add the plan column');
    const listed = await cli(['approvals', 'list']);
    expect(listed).toMatchObject({ code: EXIT.ok, stderr: '' });
    const row = listed.stdout.split('\n').find((line) => line.startsWith(taskId));
    expect(row).toContain(bob.agent.handle);
    expect(row).toContain(ops.agent.handle);
    expect(row).toContain('migrations');

    const json = await cli(['approvals', 'list', '--json']);
    expect(JSON.parse(json.stdout).items.find((item: Json) => item.id === taskId)).toMatchObject({
      state: 'held',
      hold: { rule: 'migrations', four_eyes: false, outcome: 'held' },
    });

    const shown = await cli(['approvals', 'show', taskId]);
    expect(shown.code).toBe(EXIT.ok);
    expect(shown.stdout).toContain('rule:       migrations');
    expect(shown.stdout).toContain('Please add the plan column');
    expect(shown.stdout).toContain('add the plan column');
    expect(shown.stdout).toContain('+ALTER TABLE users ADD COLUMN plan text;');
    const shownJson = JSON.parse((await cli(['approvals', 'show', taskId, '--json'])).stdout);
    expect(shownJson.task).toMatchObject({ id: taskId, state: 'held', artifacts: [{ type: 'file_diff' }] });
  });

  it('approves: the recipient gets the handoff; a second decision is a conflict', async () => {
    const taskId = await sendMigration(ops, 'Please add the plan column, again');
    const approved = await cli(['approvals', 'approve', taskId, '--comment', 'reviewed the diff']);
    expect(approved).toMatchObject({ code: EXIT.ok, stderr: '' });
    expect(approved.stdout).toBe(`Approved ${taskId}: delivered to ${ops.agent.handle} as if just sent.\n`);
    expect(await ok(relay.url, ops.api_key, 'tasks/get', { task_id: taskId })).toMatchObject({ status: { state: 'pending' } });

    const again = await cli(['approvals', 'approve', taskId]);
    expect(again.code).toBe(EXIT.conflict);
    expect(again.stderr).toMatch(/409 not_held/);
    expect(again.stderr).toContain('approvals show');
    const audit = await request(relay.url).get('/admin/audit?limit=200').set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`).expect(200);
    expect(audit.body.items.find((entry: Json) => entry.action === 'approval.approve' && entry.target === taskId)).toMatchObject({
      detail: { rule: 'migrations', comment: 'reviewed the diff' },
    });
  });

  it('denies with a reason, which the sender is told; a deny needs one', async () => {
    const taskId = await sendMigration(ops, 'Please add the plan column, once more');
    const noReason = await cli(['approvals', 'deny', taskId]);
    expect(noReason.code).toBe(EXIT.usage);
    expect(noReason.stderr).toContain('deny needs --reason');
    const denied = await cli(['approvals', 'deny', taskId, '--reason', 'not during the freeze', '--json']);
    expect(denied.code).toBe(EXIT.ok);
    expect(JSON.parse(denied.stdout)).toMatchObject({ id: taskId, state: 'rejected', hold: { outcome: 'denied', comment: 'not during the freeze' } });
    const mine = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
    expect(mine).toMatchObject({ status: { state: 'rejected' }, reason: 'Denied by an approver: not during the freeze' });
    const theirs = await rpc(relay.url, ops.api_key, 'tasks/get', { task_id: taskId });
    expect(theirs.body.error).toMatchObject({ code: -32005 });
  });

  it('explains the refusals: four eyes, an unknown task, a bad token, bad input', async () => {
    const taskId = await sendMigration(sec, 'Please rotate the keys');
    const fourEyes = await cli(['approvals', 'approve', taskId]);
    expect(fourEyes.code).toBe(EXIT.apiError);
    expect(fourEyes.stderr).toMatch(/403 four_eyes/);
    expect(fourEyes.stderr).toContain('decides it in the console');
    expect((await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId })).status.state).toBe('held');

    const fourEyesJson = await cli(['approvals', 'deny', taskId, '--reason', 'no', '--json']);
    expect(fourEyesJson.code).toBe(EXIT.apiError);
    expect(JSON.parse(fourEyesJson.stderr)).toMatchObject({ exit_code: EXIT.apiError, error: { error: { reason: 'four_eyes' } } });

    const unknown = await cli(['approvals', 'show', '01JZZZZZZZZZZZZZZZZZZZZZZZ']);
    expect(unknown.code).toBe(EXIT.notFound);
    expect(unknown.stderr).toMatch(/404 task_not_found/);

    const badToken = await cli(['approvals', 'list'], { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: 'not-the-token' });
    expect(badToken.code).toBe(EXIT.unauthorized);

    const tooLong = await cli(['approvals', 'approve', taskId, '--comment', 'x'.repeat(2001)]);
    expect(tooLong.code).toBe(EXIT.apiError);
    // The field's problem is the message itself: said once.
    expect(tooLong.stderr).toMatch(/^agentrelay: 400 invalid_params: comment: .*2000 characters\n$/);

    expect((await cli(['approvals'])).code).toBe(EXIT.usage);
    expect((await cli(['approvals', 'pause', taskId])).stderr).toContain('Unknown approvals action "pause"');
    expect((await cli(['approvals', 'list', '--limit', '0'])).code).toBe(EXIT.usage);
  });
});
