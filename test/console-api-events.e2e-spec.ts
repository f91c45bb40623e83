import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { openSse, type SseEvent, type SseStream } from './support/sse';
import { createTask } from './support/tasks';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** The next `event: task` of the stream about one of `taskIds` (events of other tests' tasks are skipped). */
async function nextTaskEvent(stream: SseStream, taskIds: string[]): Promise<SseEvent> {
  for (;;) {
    const event = await stream.next();
    if (event === undefined) throw new Error('the stream ended');
    if (event.event === 'task' && taskIds.includes(event.data.task_id)) return event;
  }
}

describe('console API: GET /admin/events, every task event of the relay', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  const streams: SseStream[] = [];
  const open = async (headers: Record<string, string>): Promise<SseStream> => {
    const stream = await openSse(`${relay.url}/admin/events`, headers, undefined);
    streams.push(stream);
    return stream;
  };

  beforeAll(async () => {
    relay = await RelayHarness.start();
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
  });

  afterAll(async () => {
    for (const stream of streams) stream.close();
    await relay?.stop();
  });

  it('starts with a ready event at the current position, then every task event live, with the contract shape', async () => {
    const stream = await open(admin);
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    const ready = await stream.next();
    expect(ready).toMatchObject({ event: 'ready', id: expect.stringMatching(/^\d+$/) });
    const taskId = await createTask(relay.url, alice, bob, 'Live for the console');
    await ok(relay.url, bob.api_key, 'tasks/update', { task_id: taskId, transition: 'accept' });
    const created = await nextTaskEvent(stream, [taskId]);
    expect(created.id).toBe(created.data.position);
    expect(BigInt(created.id as string)).toBeGreaterThan(BigInt(ready?.id as string));
    expect(created.data).toEqual({
      position: created.id,
      event: 'created',
      task_id: taskId,
      state: 'pending',
      intent: 'inform',
      summary: 'Live for the console',
      sender: alice.agent.handle,
      recipient: bob.agent.handle,
      at: expect.any(String),
    });
    const accepted = await nextTaskEvent(stream, [taskId]);
    expect(accepted.data).toMatchObject({ event: 'accepted', state: 'accepted' });
  });

  it('replays the events after Last-Event-ID from the event log, then goes on live, each event once', async () => {
    const first = await createTask(relay.url, alice, bob, 'before the reconnect');
    const watcher = await open(admin);
    await watcher.next();
    const second = await createTask(relay.url, bob, alice, 'also before the reconnect');
    const secondCreated = await nextTaskEvent(watcher, [second]);
    watcher.close();
    await ok(relay.url, bob.api_key, 'tasks/update', { task_id: first, transition: 'accept' });
    await ok(relay.url, alice.api_key, 'tasks/update', { task_id: second, transition: 'decline', reason: 'not mine' });
    // Resume after the `created` of the second task: the two transitions come back from the log.
    const resumed = await open({ ...admin, 'last-event-id': secondCreated.id as string });
    expect(await resumed.next()).toMatchObject({ event: 'ready', id: secondCreated.id });
    const replayed = [await nextTaskEvent(resumed, [first, second]), await nextTaskEvent(resumed, [first, second])];
    expect(replayed.map((event) => [event.data.task_id, event.data.event])).toEqual([
      [first, 'accepted'],
      [second, 'rejected'],
    ]);
    const third = await createTask(relay.url, alice, bob, 'after the reconnect');
    const live = await nextTaskEvent(resumed, [first, second, third]);
    expect([live.data.task_id, live.data.event]).toEqual([third, 'created']);
  });

  it('opens with the console session cookie', async () => {
    const signIn = await request(relay.url).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0];
    const stream = await open({ cookie });
    expect(stream.status).toBe(200);
    expect(await stream.next()).toMatchObject({ event: 'ready' });
  });

  it('refuses without credentials (401) and a Last-Event-ID that is no position of this relay (400)', async () => {
    await request(relay.url).get('/admin/events').expect(401);
    for (const id of ['abc', '999999999999999999']) {
      const response = await request(relay.url).get('/admin/events').set(admin).set('last-event-id', id).expect(400);
      expect(response.body.error).toMatchObject({ reason: 'invalid_params', data: { field: 'Last-Event-ID' } });
    }
  });

  it('bounds the open streams per console session and per edge with 429, the open ones going on, and a closed one freeing its slot', async () => {
    const edgeUrl = relay.urlOf(await relay.startEdge({ RELAY_ADMIN_EVENT_STREAMS_PER_SESSION: '2', RELAY_ADMIN_EVENT_STREAMS_PER_EDGE: '3' }));
    const signIn = async (): Promise<string> =>
      String((await request(edgeUrl).post('/admin/session').send({ token: TEST_ADMIN_TOKEN }).expect(201)).headers['set-cookie']).split(';')[0];
    const openOn = async (headers: Record<string, string>): Promise<SseStream> => {
      const stream = await openSse(`${edgeUrl}/admin/events`, headers, undefined);
      streams.push(stream);
      return stream;
    };
    const expectRefused = (stream: SseStream, limitName: string): void => {
      expect(stream.status).toBe(429);
      expect(Number(stream.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(stream.json?.error).toMatchObject({ reason: 'rate_limited', message: expect.stringContaining(limitName), data: { limit_name: limitName } });
    };
    const session = { cookie: await signIn() };
    const first = await openOn(session);
    const second = await openOn(session);
    for (const stream of [first, second]) {
      expect(stream.status).toBe(200);
      expect(await stream.next()).toMatchObject({ event: 'ready' });
    }
    expectRefused(await openOn(session), 'RELAY_ADMIN_EVENT_STREAMS_PER_SESSION');
    // With Last-Event-ID too: the refusal comes before any replay.
    expectRefused(await openOn({ ...session, 'last-event-id': '1' }), 'RELAY_ADMIN_EVENT_STREAMS_PER_SESSION');

    // The open ones go on.
    const taskId = await createTask(relay.url, alice, bob, 'while a third stream was refused');
    for (const stream of [first, second]) expect((await nextTaskEvent(stream, [taskId])).data).toMatchObject({ event: 'created', task_id: taskId });

    // Another session has its own two, within the edge's three.
    const other = { cookie: await signIn() };
    const third = await openOn(other);
    expect(third.status).toBe(200);
    expectRefused(await openOn(other), 'RELAY_ADMIN_EVENT_STREAMS_PER_EDGE');

    // A closed stream frees its slot once the edge sees it closed.
    second.close();
    const reopened = await eventually(async () => {
      const stream = await openOn(session);
      expect(stream.status).toBe(200);
      return stream;
    }, 15_000);
    expect(await reopened.next()).toMatchObject({ event: 'ready' });
  });
});
