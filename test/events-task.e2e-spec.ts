import type { TaskEvent } from '@app/contracts';
import { ensureEventStream, openJetStream } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { EventCollector } from './support/event-collector';
import { eventually } from './support/eventually';
import { createTask } from './support/tasks';
import { ok } from './support/json-rpc';
import { verifyStandardWebhook } from './support/notifier-helpers';
import { RelayHarness } from './support/relay-harness';
import { testNatsUrl } from './support/test-env';
import { WebhookSink, type SinkRequest } from './support/webhook-sink';

const typeOf = (request: SinkRequest): string => (JSON.parse(request.body) as { type: string }).type;

describe('a handoff end to end: task events on JetStream and signed webhooks', () => {
  let relay: RelayHarness;
  let sink: WebhookSink;
  let collector: EventCollector;
  let bob: RegisteredTestAgent;
  let frank: RegisteredTestAgent;

  beforeAll(async () => {
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_WEBHOOK_RETRY_SCHEDULE: '100ms,200ms,300ms' } });
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'handoff-events-test' });
    await ensureEventStream(jetStream.jsm, relay.subjectPrefix);
    await jetStream.connection.drain();
    collector = await EventCollector.start(relay.subjectPrefix);
    const bobHandle = uniqueHandle('bob', 'acme');
    const frankHandle = uniqueHandle('frank', 'acme');
    bob = await registerAgent(relay, {
      handle: bobHandle,
      name: 'Bob',
      notification_webhook_url: sink.url(`/${bobHandle}`),
      slack_webhook_url: sink.url(`/${bobHandle}/slack`),
    });
    frank = await registerAgent(relay, {
      handle: frankHandle,
      name: 'Frank',
      notification_webhook_url: sink.url(`/${frankHandle}`),
      slack_webhook_url: sink.url(`/${frankHandle}/slack`),
    });
  });

  afterAll(async () => {
    await collector?.stop();
    await relay?.stop();
    await sink?.stop();
  });

  it('an internal consumer of relay.events.task.> sees the whole life of a handoff, in order', async () => {
    const taskId = await createTask(relay.url, bob, frank, 'Please review the /users refactor.');
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    await ok(relay.url, frank.api_key, 'message/send', {
      task_id: taskId,
      message: { role: 'user', parts: [{ type: 'text', text: 'Which endpoint first?' }] },
    });
    await ok(relay.url, bob.api_key, 'message/send', { task_id: taskId, message: { role: 'user', parts: [{ type: 'text', text: 'Start with /users.' }] } });
    await ok(relay.url, frank.api_key, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Reviewed; two comments.' });

    await eventually(() => expect(collector.ofTask(taskId).length).toBe(5), 15000);
    const life = collector.ofTask(taskId).map((collected) => collected.event);
    expect(life.map((event) => event.type)).toEqual(['created', 'accepted', 'message_appended', 'message_appended', 'completed']);
    expect(life.map((event) => event.state)).toEqual(['pending', 'accepted', 'accepted', 'accepted', 'completed']);
    const seqs = collector.ofTask(taskId).map((collected) => collected.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    for (const collected of collector.ofTask(taskId)) expect(collected.msgId).toBe(collected.event.event_id);
    const created: TaskEvent = life[0];
    expect(created).toMatchObject({
      schema_version: 1,
      task_id: taskId,
      sender: bob.agent.handle,
      recipient: frank.agent.handle,
      sequence_no: 1,
      task: {
        summary: 'Please review the /users refactor.',
        latest_message: { from: bob.agent.handle, body: 'Please review the /users refactor.', sequence_no: 1 },
      },
    });
    expect(created.context_id).toEqual(expect.any(String));
    expect(life[2].task.latest_message).toMatchObject({ from: frank.agent.handle, sequence_no: 2 });
    expect(life[4].task.result_summary).toBe('Reviewed; two comments.');

    // Each party's webhook gets its events once, signed with the secret the admin API showed at registration.
    const bobPath = `/${bob.agent.handle}`;
    const frankPath = `/${frank.agent.handle}`;
    await eventually(
      () =>
        expect({ bob: sink.to(bobPath).length, frank: sink.to(frankPath).length, bobSlack: sink.to(`${bobPath}/slack`).length }).toEqual({
          bob: 3,
          frank: 2,
          bobSlack: 1,
        }),
      15000,
    );
    expect(sink.to(frankPath).map(typeOf)).toEqual(['a2a.task.created', 'a2a.task.message']);
    expect(sink.to(bobPath).map(typeOf).sort()).toEqual(['a2a.task.accepted', 'a2a.task.completed', 'a2a.task.message']);
    for (const request of sink.to(frankPath)) expect(verifyStandardWebhook(request, frank.webhook_secret as string)).toBe(true);
    for (const request of sink.to(bobPath)) expect(verifyStandardWebhook(request, bob.webhook_secret as string)).toBe(true);
    await eventually(() => expect(sink.to(`/${frank.agent.handle}/slack`).length).toBe(1));
  }, 40000);

  it('tells each party of every outcome through the real API: input requested and answered, declined, failed, cancelled', async () => {
    const bobPath = `/${bob.agent.handle}`;
    const frankPath = `/${frank.agent.handle}`;
    const bobBefore = sink.to(bobPath).length;
    const frankBefore = sink.to(frankPath).length;
    const update = (agent: RegisteredTestAgent, taskId: string, transition: string, extra: Record<string, unknown> = {}) =>
      ok(relay.url, agent.api_key, 'tasks/update', { task_id: taskId, transition, ...extra });

    const asked = await createTask(relay.url, bob, frank, 'Needs a question');
    await update(frank, asked, 'accept');
    await update(frank, asked, 'request_input', { message: { role: 'user', parts: [{ type: 'text', text: 'Which endpoint first?' }] } });
    await ok(relay.url, bob.api_key, 'message/send', { task_id: asked, message: { role: 'user', parts: [{ type: 'text', text: '/users' }] } });
    await update(frank, asked, 'complete', { result_summary: 'Done' });
    const declined = await createTask(relay.url, bob, frank, 'Not for frank');
    await update(frank, declined, 'decline', { reason: 'not my area' });
    const failed = await createTask(relay.url, bob, frank, 'Will break');
    await update(frank, failed, 'accept');
    await update(frank, failed, 'fail', { reason: 'tests broke' });
    const cancelled = await createTask(relay.url, bob, frank, 'Never mind');
    await update(bob, cancelled, 'cancel');

    const toBob = ['a2a.task.accepted', 'a2a.task.input_required', 'a2a.task.completed', 'a2a.task.rejected', 'a2a.task.accepted', 'a2a.task.failed'];
    const toFrank = ['a2a.task.created', 'a2a.task.message', 'a2a.task.created', 'a2a.task.created', 'a2a.task.created', 'a2a.task.canceled'];
    await eventually(
      () =>
        expect({ bob: sink.to(bobPath).length - bobBefore, frank: sink.to(frankPath).length - frankBefore }).toEqual({
          bob: toBob.length,
          frank: toFrank.length,
        }),
      15000,
    );
    const bobGot = sink.to(bobPath).slice(bobBefore);
    const frankGot = sink.to(frankPath).slice(frankBefore);
    expect(bobGot.map(typeOf).sort()).toEqual([...toBob].sort());
    expect(frankGot.map(typeOf).sort()).toEqual([...toFrank].sort());
    for (const request of bobGot) expect(verifyStandardWebhook(request, bob.webhook_secret as string)).toBe(true);
    for (const request of frankGot) expect(verifyStandardWebhook(request, frank.webhook_secret as string)).toBe(true);
    const question = bobGot
      .map((request) => JSON.parse(request.body) as { type: string; data: TaskEvent })
      .find((body) => body.type === 'a2a.task.input_required')!;
    expect(question.data).toMatchObject({
      task_id: asked,
      state: 'input_required',
      task: { latest_message: { from: frank.agent.handle, body: 'Which endpoint first?' } },
    });
    const rejection = bobGot.map((request) => JSON.parse(request.body) as { type: string; data: TaskEvent }).find((body) => body.type === 'a2a.task.rejected')!;
    expect(rejection.data).toMatchObject({ task_id: declined, state: 'rejected', task: { reason: 'not my area' } });
  }, 40000);
});
