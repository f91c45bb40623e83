import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('console API: tasks across all agents, one task, search, counts, overview, redeliver-many', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  const get = (path: string) => request(relay.url).get(path).set(admin);

  beforeAll(async () => {
    relay = await RelayHarness.start();
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', 'acme'), name: 'Carol' });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  describe('GET /admin/tasks', () => {
    let ids: string[];

    beforeAll(async () => {
      ids = [];
      ids.push(await createTask(relay.url, alice, bob, 'first for bob'));
      ids.push(await createTask(relay.url, alice, bob, 'second for bob', { intent: 'ask_question' }));
      ids.push(await createTask(relay.url, bob, carol, 'bob asks carol'));
      ids.push(await createTask(relay.url, alice, bob, 'third for bob'));
      await ok(relay.url, bob.api_key, 'tasks/update', { task_id: ids[1], transition: 'accept' });
    });

    it('lists newest first across all agents, with the row shape of the contract and no-store', async () => {
      const response = await get('/admin/tasks?limit=4').expect(200);
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body.items.map((row: Json) => row.id)).toEqual([...ids].reverse());
      expect(response.body.items[3]).toEqual({
        id: ids[0],
        context_id: expect.any(String),
        state: 'pending',
        intent: 'inform',
        summary: 'first for bob',
        sender: { handle: alice.agent.handle, name: 'Alice' },
        recipient: { handle: bob.agent.handle, name: 'Bob' },
        message_count: 1,
        artifact_count: 0,
        created_at: expect.any(String),
        updated_at: expect.any(String),
        status_timestamp: expect.any(String),
        chain: { parent_task_id: null, root_task_id: ids[0], depth: 0 },
        // Its created event's outbox position: where a snapshot's reader skips its events up to.
        last_event_position: expect.stringMatching(/^[0-9]+$/),
      });
    });

    it('filters by agent and role, state, intent, context and creation time', async () => {
      const idsOf = async (query: string): Promise<string[]> => (await get(`/admin/tasks?${query}`).expect(200)).body.items.map((row: Json) => row.id);
      const bobHandle = encodeURIComponent(bob.agent.handle);
      expect(await idsOf(`agent=${bobHandle}`)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
      expect(await idsOf(`agent=${bobHandle}&role=either`)).toEqual([ids[3], ids[2], ids[1], ids[0]]);
      expect(await idsOf(`agent=${bobHandle}&role=sender`)).toEqual([ids[2]]);
      expect(await idsOf(`agent=${bobHandle}&role=recipient`)).toEqual([ids[3], ids[1], ids[0]]);
      expect(await idsOf(`agent=${bobHandle}&state=accepted`)).toEqual([ids[1]]);
      expect(await idsOf(`agent=${bobHandle}&state=pending,accepted&role=recipient`)).toEqual([ids[3], ids[1], ids[0]]);
      expect(await idsOf(`agent=${bobHandle}&intent=ask_question`)).toEqual([ids[1]]);
      const accepted = await idsOf(`state=accepted&limit=200`);
      expect(accepted).toContain(ids[1]);
      expect(accepted).not.toContain(ids[0]);
      const first = (await get(`/admin/tasks/${ids[0]}`).expect(200)).body.task;
      expect(await idsOf(`context_id=${encodeURIComponent(first.context_id)}`)).toEqual([ids[0]]);
      const third = (await get(`/admin/tasks/${ids[2]}`).expect(200)).body.task;
      expect(await idsOf(`agent=${bobHandle}&created_after=${encodeURIComponent(third.created_at)}`)).toEqual([ids[3]]);
      expect(await idsOf(`agent=${bobHandle}&created_before=${encodeURIComponent(third.created_at)}`)).toEqual([ids[1], ids[0]]);
    });

    it('pages with a keyset cursor that neither repeats nor skips a task', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const page: Json = (await get(`/admin/tasks?agent=${encodeURIComponent(bob.agent.handle)}&limit=1${cursor ? `&cursor=${cursor}` : ''}`).expect(200))
          .body;
        seen.push(...page.items.map((row: Json) => row.id));
        cursor = page.next_cursor;
      } while (cursor !== null && seen.length < 10);
      expect(seen).toEqual([ids[3], ids[2], ids[1], ids[0]]);
    });

    it('answers 400 naming the parameter for bad input, and 404 for an unknown agent', async () => {
      for (const [query, field] of [
        ['state=bogus', 'state'],
        ['intent=shout', 'intent'],
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['created_after=yesterday', 'created_after'],
        ['role=sender', 'role'],
        ['cursor=not-a-cursor', 'cursor'],
        ['nonsense=1', 'nonsense'],
      ]) {
        const response = await get(`/admin/tasks?${query}`);
        expect([query, response.status, response.body.error?.fields?.[0]?.field ?? response.body.error?.data?.field]).toEqual([query, 400, field]);
      }
      const unknown = await get('/admin/tasks?agent=nobody@nowhere').expect(404);
      expect(unknown.body.error.reason).toBe('agent_not_found');
    });
  });

  describe('GET /admin/tasks/{id}', () => {
    it('answers the task with its typed artifacts, its timeline from the event log, oldest first, and its audit', async () => {
      const diff = '--- a/users.ts\n+++ b/users.ts\n@@ -1 +1 @@\n-old\n+new\n';
      const id = await createTask(relay.url, alice, bob, 'Refactored the users API', {
        artifacts: [{ type: 'file_diff', path: 'src/users.ts', diff }],
      });
      await ok(relay.url, bob.api_key, 'tasks/update', { task_id: id, transition: 'accept' });
      await ok(relay.url, bob.api_key, 'message/send', { task_id: id, message: { role: 'agent', parts: [{ type: 'text', text: 'On it' }] } });
      await ok(relay.url, bob.api_key, 'tasks/update', { task_id: id, transition: 'complete', result_summary: 'Done' });
      const detail = await eventually(async () => {
        const body = (await get(`/admin/tasks/${id.toLowerCase()}`).expect(200)).body;
        expect(body.timeline.map((entry: Json) => entry.event)).toEqual(expect.arrayContaining(['completed']));
        return body;
      });
      expect(detail.task).toMatchObject({ id, state: 'completed', sender: { handle: alice.agent.handle }, recipient: { handle: bob.agent.handle } });
      expect(detail.task.artifacts[0]).toMatchObject({ type: 'file_diff', fields: { path: 'src/users.ts', diff } });
      expect(detail.task.messages.map((message: Json) => message.body)).toEqual(['Refactored the users API', 'On it']);
      const timeline = detail.timeline.map((entry: Json) => [entry.event, entry.actor, entry.state, entry.message?.body ?? null]);
      expect(timeline).toEqual([
        ['created', alice.agent.handle, 'pending', 'Refactored the users API'],
        ['accepted', bob.agent.handle, 'accepted', null],
        ['message_appended', bob.agent.handle, 'accepted', 'On it'],
        ['completed', bob.agent.handle, 'completed', null],
      ]);
      const positions = detail.timeline.map((entry: Json) => BigInt(entry.position));
      expect([...positions].sort((a, b) => (a < b ? -1 : 1))).toEqual(positions);
      expect(detail.timeline_truncated).toBe(false);
      expect(detail.audit.map((row: Json) => [row.action, row.actor, row.from_state, row.to_state])).toEqual([
        ['create', alice.agent.handle, null, 'pending'],
        ['accept', bob.agent.handle, 'pending', 'accepted'],
        ['complete', bob.agent.handle, 'accepted', 'completed'],
      ]);
    });

    it('bounds a long timeline to one reply and says so', async () => {
      const big = 'x'.repeat(90_000);
      const id = await createTask(relay.url, alice, bob, `${big} 0`);
      for (let index = 1; index < 14; index++) {
        await ok(relay.url, alice.api_key, 'message/send', { task_id: id, message: { role: 'user', parts: [{ type: 'text', text: `${big} ${index}` }] } });
      }
      const response = await get(`/admin/tasks/${id}`).expect(200);
      expect(response.body.timeline_truncated).toBe(true);
      expect(response.body.messages_truncated).toBe(true);
      expect(response.body.timeline.length).toBeGreaterThan(0);
      expect(response.body.timeline.length).toBeLessThan(14);
      expect(Buffer.byteLength(JSON.stringify(response.body))).toBeLessThan(960 * 1024);
    });

    it('answers 404 task_not_found for an unknown or malformed id', async () => {
      for (const id of ['01JAAAAAAAAAAAAAAAAAAAAAAA', 'nope', 'x'.repeat(100)]) {
        const response = await get(`/admin/tasks/${id}`).expect(404);
        expect(response.body.error.reason).toBe('task_not_found');
      }
    });
  });

  describe('GET /admin/search', () => {
    let zebra: string;
    let quokka: string;

    beforeAll(async () => {
      zebra = await createTask(relay.url, alice, bob, 'The zebrafish migration failed on <b>staging</b> & prod \u0001 again');
      await ok(relay.url, bob.api_key, 'message/send', {
        task_id: zebra,
        message: { role: 'agent', parts: [{ type: 'text', text: 'Retrying the zebrafish migrations tonight (after 22:00).' }] },
      });
      quokka = await createTask(relay.url, bob, carol, 'Schema attached', {
        artifacts: [{ type: 'file_ref', path: 'db/quokka-schema.sql' }],
      });
    });

    it('finds message text, ranked, with highlights as plain fragments', async () => {
      const response = await get('/admin/search?q=zebrafish').expect(200);
      expect(response.headers['cache-control']).toBe('no-store');
      const hit = response.body.items.find((item: Json) => item.task.id === zebra);
      expect(hit).toBeDefined();
      expect(hit.task).toMatchObject({ id: zebra, sender: { handle: alice.agent.handle }, recipient: { handle: bob.agent.handle } });
      expect(hit.rank).toBeGreaterThan(0);
      const ranks = response.body.items.map((item: Json) => item.rank);
      expect([...ranks].sort((a, b) => b - a)).toEqual(ranks);
      expect(hit.highlights.map((highlight: Json) => highlight.source)).toEqual(['message', 'message']);
      const first = hit.highlights.find((highlight: Json) => highlight.sequence_no === 1);
      expect(first.fragments.filter((fragment: Json) => fragment.match).map((fragment: Json) => fragment.text.toLowerCase())).toEqual(['zebrafish']);
      const text = first.fragments.map((fragment: Json) => fragment.text).join('');
      // The text parser drops what looks like markup: nothing the server answers is HTML.
      expect(text).toMatch(/failed on\s+staging\s+& prod/);
      expect(text).not.toContain('<b>');
      expect([text.includes('\u0001'), text.includes('\u0002')]).toEqual([false, false]);
      // A short message comes back whole, its closing punctuation included.
      const reply = hit.highlights.find((highlight: Json) => highlight.sequence_no !== 1);
      expect(reply.fragments.map((fragment: Json) => fragment.text).join('')).toBe('Retrying the zebrafish migrations tonight (after 22:00).');
    });

    it('finds artifact names, and stems words (migrations finds migration)', async () => {
      const artifact = (await get('/admin/search?q=quokka').expect(200)).body.items.find((item: Json) => item.task.id === quokka);
      expect(artifact.highlights[0]).toMatchObject({ source: 'artifact' });
      const stemmed = (await get('/admin/search?q=migrations').expect(200)).body.items.map((item: Json) => item.task.id);
      expect(stemmed).toContain(zebra);
    });

    it('applies the list filters', async () => {
      const ofCarol = (await get(`/admin/search?q=zebrafish&agent=${encodeURIComponent(carol.agent.handle)}`).expect(200)).body.items;
      expect(ofCarol).toEqual([]);
      const accepted = (await get('/admin/search?q=zebrafish&state=accepted').expect(200)).body.items.map((item: Json) => item.task.id);
      expect(accepted).not.toContain(zebra);
      const page = await get('/admin/search?q=zebrafish OR quokka&limit=1').expect(200);
      expect(page.body.items).toHaveLength(1);
      expect(page.body.next_cursor).toEqual(expect.any(String));
      const next = await get(`/admin/search?q=zebrafish OR quokka&limit=1&cursor=${page.body.next_cursor}`).expect(200);
      expect(next.body.items[0].task.id).not.toBe(page.body.items[0].task.id);
    });

    it('answers 400 naming q for a blank or missing query', async () => {
      for (const query of ['', '?q=', '?q=%20%20']) {
        const response = await get(`/admin/search${query}`).expect(400);
        expect(response.body.error.fields[0].field).toBe('q');
      }
    });
  });

  it('GET /admin/agents/{handle}/counts counts the inbox and the sent tasks by state', async () => {
    const dave = await registerAgent(relay, { handle: uniqueHandle('dave', 'acme'), name: 'Dave' });
    const erin = await registerAgent(relay, { handle: uniqueHandle('erin', 'acme'), name: 'Erin' });
    const first = await createTask(relay.url, dave, erin, 'one');
    await createTask(relay.url, dave, erin, 'two');
    await createTask(relay.url, erin, dave, 'three');
    await ok(relay.url, erin.api_key, 'tasks/update', { task_id: first, transition: 'decline', reason: 'no' });
    const response = await get(`/admin/agents/${encodeURIComponent(erin.agent.handle.toUpperCase())}/counts`).expect(200);
    expect(response.body).toEqual({
      inbox: { held: 0, pending: 1, accepted: 0, input_required: 0, completed: 0, cancelled: 0, failed: 0, rejected: 1 },
      sent: { held: 0, pending: 1, accepted: 0, input_required: 0, completed: 0, cancelled: 0, failed: 0, rejected: 0 },
    });
    await get('/admin/agents/nobody@nowhere/counts').expect(404);
  });

  it('GET /admin/overview shows the last hour per minute, open tasks, the oldest pending one, delivery failures and outbox lag', async () => {
    const before = (await get('/admin/overview').expect(200)).body;
    await createTask(relay.url, alice, carol, 'for the overview');
    const after = (await get('/admin/overview').expect(200)).body;
    expect(after.per_minute).toHaveLength(60);
    const minutes = after.per_minute.map((entry: Json) => Date.parse(entry.minute));
    expect(minutes[59] - minutes[0]).toBe(59 * 60_000);
    const created = (overview: Json): number => overview.per_minute.reduce((sum: number, entry: Json) => sum + entry.created, 0);
    expect(created(after)).toBeGreaterThanOrEqual(Math.min(created(before) + 1, 1));
    expect(after.per_minute[59].created + after.per_minute[58].created).toBeGreaterThanOrEqual(1);
    expect(after.open_by_state.pending).toBe(before.open_by_state.pending + 1);
    expect(after.oldest_pending).toMatchObject({ id: expect.any(String), created_at: expect.any(String), sender: expect.any(String) });
    expect(after.delivery_failures).toEqual({ failed: expect.any(Number), dead: expect.any(Number) });
    expect(after.outbox_lag).toEqual({
      unpublished: expect.any(Number),
      oldest_unpublished_ms: after.outbox_lag.unpublished === 0 ? null : expect.any(Number),
    });
  });

  it('POST /admin/deliveries/redeliver sends the dead letters of a task again, and writes an audit row', async () => {
    // A loopback webhook is refused by the notifier's SSRF guard: the delivery becomes a dead letter.
    const hooked = await registerAgent(relay, { handle: uniqueHandle('hooked', 'acme'), name: 'Hooked', notification_webhook_url: 'http://127.0.0.1:9/hook' });
    const taskId = await createTask(relay.url, alice, hooked, 'to a refused webhook');
    const dead = await eventually(async () => {
      const deliveries = (await get(`/admin/deliveries?task_id=${taskId}&status=dead`).expect(200)).body.deliveries;
      expect(deliveries.length).toBeGreaterThan(0);
      return deliveries.length as number;
    }, 20000);
    const response = await request(relay.url).post('/admin/deliveries/redeliver').set(admin).send({ status: 'dead', task_id: taskId }).expect(202);
    expect(response.body).toEqual({ redelivered: dead });
    const audit = (await get('/admin/audit?limit=20').expect(200)).body.items;
    expect(audit.find((row: Json) => row.action === 'delivery.redeliver_many' && row.detail.task_id === taskId)).toMatchObject({
      actor: 'admin token',
      detail: { status: 'dead', task_id: taskId, redelivered: dead },
    });
    for (const body of [{ status: 'succeeded' }, {}, { status: 'dead', extra: 1 }]) {
      await request(relay.url).post('/admin/deliveries/redeliver').set(admin).send(body).expect(400);
    }
  });
});
