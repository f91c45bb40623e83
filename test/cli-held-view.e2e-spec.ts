import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { ok, rpc } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

/**
 * What each party of a handoff reads in the terminal: the recipient of a held handoff is told it
 * has not reached them (not that they are a stranger to it), its sender sees the rule that held it
 * and who decides, `sent` names the recipient, `show` prints an artifact's text, and hints name the
 * command the person ran.
 */
describe('agentrelay agent commands say what happened', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let ops: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  const suffix = randomUUID().slice(0, 6);

  beforeAll(async () => {
    relay = await RelayHarness.start();
    alice = await registerAgent(relay, { handle: `alice@acme${suffix}`, name: 'Alice' });
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops' });
    bob = await registerAgent(relay, { handle: `bob@acme${suffix}`, name: 'Bob' });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ hold: [{ name: 'review-first', four_eyes: true }] })
      .expect(200);
  });

  afterAll(async () => {
    await relay?.stop();
  });

  async function cli(argv: string[], agent: RegisteredTestAgent, program?: string): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = '';
    let stderr = '';
    const code = await run(
      argv,
      { RELAY_URL: relay.url, AGENTRELAY_API_KEY: agent.api_key },
      { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), ...(program ? { program } : {}) },
    );
    return { code, stdout, stderr };
  }

  it('tells the recipient of a held handoff it has not been delivered, and shows its sender the rule and who decides', async () => {
    const sent = await cli(['send', ops.agent.handle, 'Rotate the staging keys'], alice);
    expect(sent.code).toBe(EXIT.ok);
    const taskId = /Sent handoff (\w+)/.exec(sent.stdout)?.[1] as string;
    expect(sent.stdout).toContain('(held)');
    expect(sent.stdout).toContain(`Held for approval by rule "review-first" of the recipient's trust policy`);

    const recipient = await cli(['show', taskId], ops);
    expect(recipient.code).toBe(EXIT.notFound);
    expect(recipient.stderr).not.toContain('neither the sender nor the recipient');
    expect(recipient.stderr).toContain('has not been delivered to you');

    const shown = await cli(['show', taskId], alice);
    expect(shown.code).toBe(EXIT.ok);
    expect(shown.stdout).toContain(`Held for approval by rule "review-first" of the recipient's trust policy`);
    expect(shown.stdout).toMatch(/Decided by a person with the approver role .*who does not own the sending agent \(four eyes\)/);
    expect(shown.stdout).toMatch(/denied by itself at \d{4}-\d\d-\d\dT/);

    const listed = await cli(['sent'], alice, 'npm run cli --');
    expect(listed.stdout).toMatch(/^TASK\s+STATE\s+TO\s+INTENT/);
    expect(listed.stdout).toMatch(new RegExp(`${taskId}\\s+held \\(rule review-first\\)\\s+${ops.agent.handle.replace('.', '\\.')}\\s+inform`));
    expect(listed.stdout).toContain('"npm run cli -- show <task>" says which rule held one');
  });

  it('shows the text of an artifact a standard A2A client attached, not only its name', async () => {
    const created = await ok(relay.url, alice.api_key, 'message/send', {
      recipient: bob.agent.handle,
      intent: 'ask_question',
      message: { role: 'user', parts: [{ type: 'text', text: 'Which plan column type?' }] },
    });
    const taskId = created.task_id as string;
    const accepted = await cli(['accept', taskId], bob, './bin/agentrelay.mjs');
    expect(accepted.stdout).toContain(`read it with "./bin/agentrelay.mjs show ${taskId}"`);
    const completed = await rpc(
      relay.url,
      bob.api_key,
      'CompleteTask',
      {
        id: taskId,
        artifacts: [{ artifactId: 'a1', name: 'answer', parts: [{ text: 'Use text, nullable: old rows have no plan.' }, { data: { nullable: true } }] }],
      },
      { path: `/a2a/${alice.agent.handle}`, headers: { 'a2a-version': '1.0' } },
    );
    expect(completed.body.error).toBeUndefined();

    const shown = await cli(['show', taskId], alice);
    expect(shown.code).toBe(EXIT.ok);
    expect(shown.stdout).toContain('- artifact answer');
    expect(shown.stdout).toContain('Use text, nullable: old rows have no plan.');
    expect(shown.stdout).toContain('"nullable": true');
  });
});
