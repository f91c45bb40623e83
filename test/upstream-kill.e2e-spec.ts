import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type Message, type Task } from '@a2a-js/sdk';
import { type Client } from '@a2a-js/sdk/client';
import { eventually } from './support/eventually';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { ServiceProcess } from './support/process/service-process';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient } from './support/sdk-client';
import { startUpstreamAgent, type UpstreamAgent } from './support/upstream-agent';

function texts(message: { parts: Message['parts'] } | undefined): string[] {
  return (message?.parts ?? []).flatMap((part) => (part.content?.$case === 'text' ? [part.content.value] : []));
}

async function send(client: Client, text: string): Promise<string> {
  const sent = (await client.sendMessage({
    tenant: '',
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      taskId: '',
      contextId: '',
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
    metadata: undefined,
  })) as Task;
  return sent.id;
}

/**
 * The notifier delivers to and follows upstream agents; here it runs as a real process and is
 * killed with SIGKILL while it holds open streams (an upstream whose card declares streaming) and
 * polls (one whose card does not), with handoffs sent while it is down; a fresh notifier takes over.
 */
describe('SIGKILL of the notifier while it delivers to and follows upstream A2A agents', () => {
  let relay: RelayHarness;
  let sender: RegisteredTestAgent;
  const upstreams: UpstreamAgent[] = [];
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    relay = await RelayHarness.start({
      env: {
        RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
        RELAY_WEBHOOK_RETRY_SCHEDULE: '300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
        RELAY_UPSTREAM_POLL_MIN_MS: '100',
        RELAY_UPSTREAM_POLL_MAX_MS: '1000',
      },
    });
    sender = await registerAgent(relay, { handle: uniqueHandle('alice', 'upkill'), name: 'Alice' });
  });

  afterAll(async () => {
    for (const started of processes) await started.kill();
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await relay?.stop();
  });

  it('no upstream task is made twice and no answer is lost', async () => {
    const streaming = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '1.0', streaming: true, behaviour: 'gated' });
    const polled = await startUpstreamAgent({ binding: 'JSONRPC', card: '0.3', behaviour: 'gated' });
    upstreams.push(streaming, polled);
    const clients: Client[] = [];
    for (const upstream of [streaming, polled]) {
      const handle = uniqueHandle('gated', 'upkill');
      const registered = await request(relay.url)
        .post('/admin/agents')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ handle, name: 'Gated', upstream: { card_url: upstream.cardUrl } });
      expect(registered.status).toBe(201);
      clients.push(await senderClient(relay, sender, handle));
    }

    await relay.stopService('notifier');
    const notifier = await ServiceProcess.start(relay, 'notifier');
    processes.push(notifier);
    const sent: Array<{ client: Client; id: string; text: string }> = [];
    for (const [index, client] of clients.entries()) {
      for (let n = 0; n < 3; n++) {
        const text = `job ${index}-${n}`;
        sent.push({ client, id: await send(client, text), text });
      }
    }
    // Every task is at its upstream, and followed: the first step is in the relay task.
    await eventually(
      async () => {
        expect(streaming.tasksCreated).toHaveLength(3);
        expect(polled.tasksCreated).toHaveLength(3);
        for (const { client, id } of sent) {
          const task = await client.getTask({ tenant: '', id, historyLength: undefined });
          expect(task.history.flatMap(texts)).toContain('step 1 done');
        }
      },
      30_000,
      100,
    );

    await notifier.kill();
    for (const [index, client] of clients.entries()) {
      const text = `job ${index}-while-down`;
      sent.push({ client, id: await send(client, text), text });
    }
    await relay.startService('notifier');
    streaming.openGate();
    polled.openGate();

    await eventually(
      async () => {
        for (const { client, id, text } of sent) {
          const task = await client.getTask({ tenant: '', id, historyLength: undefined });
          expect({ text, state: task.status?.state }).toEqual({ text, state: TaskState.TASK_STATE_COMPLETED });
          const answers = task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts);
          expect(answers).toContain(`echo: ${text}`);
          if (!text.endsWith('while-down')) expect(answers).toEqual(['step 1 done', `echo: ${text}`]);
          expect(Object.fromEntries(task.artifacts.map((artifact) => [artifact.artifactId, texts(artifact)]))).toMatchObject({
            'echo-result': [text.toUpperCase()],
          });
        }
      },
      // A poll under way when the process died holds its row for the lease (60 s).
      150_000,
      250,
    );
    // One upstream task per handoff, each with its own message.
    for (const [index, upstream] of [streaming, polled].entries()) {
      expect(upstream.tasksCreated.map((message) => texts(message)[0]).sort()).toEqual(
        sent
          .filter(({ text }) => text.startsWith(`job ${index}-`))
          .map(({ text }) => text)
          .sort(),
      );
    }
    // The log artifact, streamed in two chunks around the kill, is whole.
    for (const { client, id, text } of sent.filter((entry) => entry.text.startsWith('job 0-') && !entry.text.endsWith('while-down'))) {
      const task = await client.getTask({ tenant: '', id, historyLength: undefined });
      expect({ text, log: texts(task.artifacts.find((artifact) => artifact.artifactId === 'log')) }).toEqual({ text, log: ['part 1;', 'part 2'] });
    }
  }, 240_000);

  it('the tasks service killed while the upstreams answer: every answer reaches the relay task once, no upstream task is made twice', async () => {
    const streaming = await startUpstreamAgent({ binding: 'JSONRPC', card: '1.0', streaming: true, behaviour: 'gated' });
    const polled = await startUpstreamAgent({ binding: 'HTTP+JSON', card: '0.3', behaviour: 'gated' });
    upstreams.push(streaming, polled);
    const clients: Client[] = [];
    for (const upstream of [streaming, polled]) {
      const handle = uniqueHandle('answers', 'upkill');
      const registered = await request(relay.url)
        .post('/admin/agents')
        .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ handle, name: 'Gated', upstream: { card_url: upstream.cardUrl } });
      expect(registered.status).toBe(201);
      clients.push(await senderClient(relay, sender, handle));
    }
    await relay.stopService('tasks');
    const tasks = await ServiceProcess.start(relay, 'tasks');
    processes.push(tasks);
    const sent: Array<{ client: Client; id: string; text: string }> = [];
    for (const [index, client] of clients.entries()) {
      for (let n = 0; n < 2; n++) {
        const text = `answer ${index}-${n}`;
        sent.push({ client, id: await send(client, text), text });
      }
    }
    await eventually(
      async () => {
        for (const { client, id } of sent) {
          const task = await client.getTask({ tenant: '', id, historyLength: undefined });
          expect(task.history.flatMap(texts)).toContain('step 1 done');
        }
      },
      30_000,
      100,
    );

    // The upstreams answer while nobody can write them into the relay tasks.
    await tasks.kill();
    streaming.openGate();
    polled.openGate();
    await eventually(() => {
      for (const upstream of [streaming, polled]) {
        expect([...upstream.tasks.values()].map((task) => task.status?.state)).toEqual([TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_COMPLETED]);
      }
    }, 20_000);
    await relay.startService('tasks');

    await eventually(
      async () => {
        for (const { client, id, text } of sent) {
          const task = await client.getTask({ tenant: '', id, historyLength: undefined });
          expect({ text, state: task.status?.state }).toEqual({ text, state: TaskState.TASK_STATE_COMPLETED });
          expect(task.history.filter((message) => message.role === Role.ROLE_AGENT).flatMap(texts)).toEqual(['step 1 done', `echo: ${text}`]);
          expect(Object.fromEntries(task.artifacts.map((artifact) => [artifact.artifactId, texts(artifact)]))).toEqual({
            log: ['part 1;', 'part 2'],
            'echo-result': [text.toUpperCase()],
          });
        }
      },
      120_000,
      250,
    );
    expect(streaming.tasksCreated).toHaveLength(2);
    expect(polled.tasksCreated).toHaveLength(2);
  }, 240_000);
});
