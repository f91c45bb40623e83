import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { HOLD_RULE_LIMITS, TASK_LIMITS } from '@app/contracts';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { ok, rpc } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const MIGRATIONS = '**/db/**/migrations/**/*.sql';

/** A target path that a backtracking matcher of MIGRATIONS tries every split of: many `db/`, many `migrations/`, no `.sql`. */
function craftedPath(index: number): string {
  return `${index}/${'db/'.repeat(68)}${'migrations/'.repeat(68)}${'/'.repeat(68)}x`.slice(0, TASK_LIMITS.proposedActionTargetFileChars);
}

/**
 * Hold-rule globs are matched in linear time: a handoff naming 200 crafted paths against a rule
 * with three `**` is answered (and delivered: none of its paths is a migration), and another
 * tenant's reads made meanwhile take about as long as the same reads alone, measured in this run.
 * Globs and sender patterns past their wildcard caps are refused where the policy is written.
 */
describe('hold-rule globs', () => {
  let relay: RelayHarness;
  let ops: RegisteredTestAgent;
  let mallory: RegisteredTestAgent;
  let reader: RegisteredTestAgent;
  let readerTaskId: string;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    const suffix = randomUUID().slice(0, 6);
    ops = await registerAgent(relay, { handle: `ops@acme${suffix}`, name: 'Ops' });
    mallory = await registerAgent(relay, { handle: `mallory@acme${suffix}`, name: 'Mallory' });
    reader = await registerAgent(relay, { handle: `reader@other${suffix}`, name: 'Reader' });
    const peer = await registerAgent(relay, { handle: `peer@other${suffix}`, name: 'Peer' });
    await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ hold: [{ name: 'migrations', paths: [MIGRATIONS] }] })
      .expect(200);
    const sent = await ok(relay.url, reader.api_key, 'message/send', {
      recipient: peer.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'a task to read' }] },
    });
    readerTaskId = sent.task_id as string;
  });

  afterAll(async () => {
    await relay?.stop();
  });

  const propose = (targetFiles: string[]) =>
    rpc(relay.url, mallory.api_key, 'message/send', {
      recipient: ops.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: 'Please apply' }] },
      intent: 'propose_action',
      proposed_action: { description: 'apply the change', target_files: targetFiles, rationale: 'it is needed' },
    });

  /** The slowest of the reader's reads of its own task, made one after another until `until` settles (or `count` reads). */
  const slowestRead = async (until: Promise<unknown> | null, count = 10): Promise<number> => {
    let settled = false;
    void until?.finally(() => (settled = true));
    let slowest = 0;
    for (let made = 0; until ? !settled || made === 0 : made < count; made++) {
      const started = performance.now();
      await ok(relay.url, reader.api_key, 'tasks/get', { task_id: readerTaskId });
      slowest = Math.max(slowest, performance.now() - started);
    }
    return slowest;
  };

  it('still holds what the rule names and delivers what it does not', async () => {
    const held = await propose(['apps/api/db/v2/migrations/007/add-index.sql']);
    expect(held.body.result).toMatchObject({ status: { state: 'held' }, hold: { rule: 'migrations' } });
    const delivered = await propose(['apps/api/db/v2/migrations/007/add-index.sq']);
    expect(delivered.body.result).toMatchObject({ status: { state: 'pending' } });
  });

  it("answers three handoffs of 200 crafted paths at once, and another tenant's reads stay within twice their time alone (floor 1 s)", async () => {
    await slowestRead(null, 3);
    const alone = await slowestRead(null, 10);

    const crafted = Array.from({ length: TASK_LIMITS.proposedActionTargetFiles }, (_, index) => craftedPath(index));
    const handoffs = Promise.all([propose(crafted), propose(crafted.slice(1).concat('src/a.ts')), propose(crafted.slice(2).concat('src/b.ts', 'src/c.ts'))]);
    const beside = await slowestRead(handoffs);

    for (const answer of await handoffs) {
      expect(answer.status).toBe(200);
      expect(answer.body.error).toBeUndefined();
      expect(answer.body.result).toMatchObject({ status: { state: 'pending' } });
    }
    expect(beside).toBeLessThanOrEqual(Math.max(2 * alone, 1000));
  });

  it('refuses, where the policy is written, a glob or a sender pattern past its wildcard cap, naming the cap', async () => {
    const tooManyStars = `${'**/'.repeat(HOLD_RULE_LIMITS.pathPatternWildcards)}*.sql`;
    const glob = await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ hold: [{ name: 'deep', paths: [tooManyStars] }] });
    expect(glob.status).toBe(400);
    expect(JSON.stringify(glob.body)).toContain(`hold[0].paths[0]: a path glob has at most ${HOLD_RULE_LIMITS.pathPatternWildcards} wildcards`);

    const sender = await request(relay.url)
      .put(`/admin/agents/${ops.agent.handle}/trust`)
      .set(admin)
      .send({ tool_prompts: [{ name: 'stars', senders: [`${'*a'.repeat(HOLD_RULE_LIMITS.senderPatternWildcards)}*@acme`] }] });
    expect(sender.status).toBe(400);
    expect(JSON.stringify(sender.body)).toContain(
      `tool_prompts[0].senders[0]: a sender pattern has at most ${HOLD_RULE_LIMITS.senderPatternWildcards} wildcards`,
    );

    // Nothing was written: the rule set before still holds.
    const trust = await request(relay.url).get(`/admin/agents/${ops.agent.handle}/trust`).set(admin).expect(200);
    expect(trust.body.hold).toEqual([{ name: 'migrations', paths: [MIGRATIONS] }]);
  });
});
