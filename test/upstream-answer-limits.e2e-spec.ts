import request from 'supertest';
import type { AdminTaskDetail, AgentRecord, UpstreamCallView } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { startUpstreamAgent, type UpstreamAgentOptions, type UpstreamAgent } from './support/upstream-agent';

const ADMIN = `Bearer ${TEST_ADMIN_TOKEN}`;
const ANSWER_LIMIT_BYTES = 8 * 1024 * 1024;
const POLL_MAX_MS = 500;

/** An object nested `depth` levels deep. */
function nested(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let level = 1; level < depth; level++) value = { level: value };
  return value;
}

describe('Upstream answers: a byte limit on every answer, the payload bounds on what is stored, and a follow that gives up visibly', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  const upstreams: UpstreamAgent[] = [];

  beforeAll(async () => {
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '500ms,500ms,500ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: String(POLL_MAX_MS),
        RELAY_UPSTREAM_MAX_ANSWER_BYTES: String(ANSWER_LIMIT_BYTES),
        RELAY_UPSTREAM_MAX_TIMED_OUT_POLLS: '2',
      },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upan'), name: 'Alice' });
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
  });

  /** An upstream agent registered with the relay, and a handoff to it: the relay task's id. */
  async function handOffTo(options: Partial<UpstreamAgentOptions>, extra: Record<string, unknown> = {}): Promise<{ upstream: UpstreamAgent; taskId: string }> {
    const upstream = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', ...options });
    upstreams.push(upstream);
    const handle = uniqueHandle('upstream', 'upan');
    const registered = await request(relay.url)
      .post('/admin/agents')
      .set('authorization', ADMIN)
      .send({ handle, name: 'Upstream', upstream: { card_url: upstream.cardUrl }, ...extra });
    expect(registered.status).toBe(201);
    const taskId = await createTask(relay.url, sender, { agent: registered.body.agent as AgentRecord } as RegisteredTestAgent, 'Hello upstream');
    return { upstream, taskId };
  }

  async function detail(taskId: string): Promise<AdminTaskDetail> {
    return (await request(relay.url).get(`/admin/tasks/${taskId}`).set('authorization', ADMIN).expect(200)).body as AdminTaskDetail;
  }

  /** Waits until the relay task failed, and checks its reason is in its last message, the timeline and the audit log. */
  async function failedWith(taskId: string, reason: RegExp): Promise<AdminTaskDetail> {
    const shown = await eventually(
      async () => {
        const current = await detail(taskId);
        expect(current.task.state).toBe('failed');
        return current;
      },
      90_000,
      200,
    );
    expect(shown.task.reason).toMatch(reason);
    expect(shown.task.messages.at(-1)?.parts).toEqual([{ kind: 'text', text: shown.task.reason }]);
    expect(shown.timeline.find((entry) => entry.event === 'failed')?.reason).toBe(shown.task.reason);
    expect(shown.audit.map((row) => [row.action, row.to_state])).toContainEqual(['fail', 'failed']);
    return shown;
  }

  /** The upstream is asked nothing more: no request over several of the longest poll waits. */
  async function notAskedAgain(upstream: UpstreamAgent): Promise<void> {
    const asked = upstream.calls.length;
    await new Promise((resolve) => setTimeout(resolve, 6 * POLL_MAX_MS));
    expect(upstream.calls.length).toBe(asked);
  }

  it('reads a 200 MB GetTask answer only up to the limit, fails the task saying so, and does not download it again', async () => {
    const { upstream, taskId } = await handOffTo({ behaviour: 'wait', shapeAnswer: (post) => (post > 1 ? { padBytes: 200 * 1024 * 1024 } : undefined) });
    await failedWith(taskId, /larger than the relay reads \(8388608 bytes\)/);
    // Cut off: the server wrote the limit and what the sockets' buffers hold, never the whole answer.
    console.log(`bytes of the 200 MB GetTask answers the upstream could write before the relay closed the connection: ${upstream.wire.paddedBytesSent}`);
    expect(upstream.wire.paddedAnswersCompleted).toBe(0);
    expect(upstream.wire.paddedBytesSent).toBeLessThan(ANSWER_LIMIT_BYTES + 32 * 1024 * 1024);
    const calls = (await request(relay.url).get(`/admin/tasks/${taskId}/upstream-calls`).set('authorization', ADMIN).expect(200)).body
      .calls as UpstreamCallView[];
    expect(calls.map((call) => [call.method, call.outcome])).toContainEqual(['GetTask', 'too_large']);
    await notAskedAgain(upstream);
  }, 180_000);

  it('fails a task whose answer no reply of the relay could carry, instead of keeping it accepted and downloading it at every poll', async () => {
    const { upstream, taskId } = await handOffTo({ answerTexts: Array.from({ length: 30 }, (_, index) => `${index}`.padEnd(90_000, 'w')) });
    await failedWith(taskId, /out of the relay's bounds: a message of \d+ bytes is larger than the relay carries/);
    await notAskedAgain(upstream);
  }, 180_000);

  it.each([
    [
      'a data part of 5,000 keys',
      Object.fromEntries(Array.from({ length: 5000 }, (_, index) => [`k${index}`, index])),
      /message\.parts\[1\]\.data has an object or array with more than 256 keys/,
    ],
    ['a data part nested 200 deep', nested(200), /message\.parts\[1\]\.data nests objects and arrays deeper than 16 levels/],
  ])(
    'stores and serves nothing of an answer with %s: the task fails, naming the bound',
    async (_kind, data, reason) => {
      const { upstream, taskId } = await handOffTo({ answerData: data });
      const shown = await failedWith(taskId, reason);
      expect(JSON.stringify(shown.task.messages)).not.toContain('"k4999"');
      expect(shown.task.messages.every((message) => message.parts.every((part) => part.kind !== 'data'))).toBe(true);
      await notAskedAgain(upstream);
    },
    180_000,
  );

  it('fails a task whose GetTask answer drips past the deadline twice in a row (RELAY_UPSTREAM_MAX_TIMED_OUT_POLLS)', async () => {
    const { upstream, taskId } = await handOffTo({ behaviour: 'wait', shapeAnswer: (post) => (post > 1 ? 'drip' : undefined) }, { webhook_timeout_ms: 1000 });
    await failedWith(taskId, /did not answer GetTask whole within 1000 ms, 2 times in a row/);
    expect(upstream.wire.dripsClosed).toBeGreaterThanOrEqual(2);
    await notAskedAgain(upstream);
  }, 180_000);
});
