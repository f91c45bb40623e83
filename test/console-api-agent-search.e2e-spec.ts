import { RelayClient } from '@app/relay-client';
import { run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, ok, rpc, type Json } from './support/json-rpc';
import { McpAgent } from './support/mcp-agent';
import { RelayHarness } from './support/relay-harness';
import { createTask } from './support/tasks';

/** These tests start an MCP server process: a loaded machine starts it slowly. */
const PROCESS_TEST_TIMEOUT_MS = 240_000;

describe('tasks/search: agents search their own tasks (JSON-RPC, relay client, MCP tool, CLI)', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;
  let stranger: RegisteredTestAgent;
  let aliceToBob: string;
  let bobToCarol: string;
  let carolToAlice: string;
  const word = `walrus${Math.random().toString(36).slice(2, 7)}`;
  const idsOf = (result: Json): string[] => result.items.map((item: Json) => item.task_id);

  beforeAll(async () => {
    relay = await RelayHarness.start();
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', 'acme'), name: 'Carol' });
    stranger = await registerAgent(relay, { handle: uniqueHandle('stranger', 'acme'), name: 'Stranger' });
    aliceToBob = await createTask(relay.url, alice, bob, `The ${word} importer drops rows`);
    bobToCarol = await createTask(relay.url, bob, carol, `Another ${word} problem, in the exporter`);
    carolToAlice = await createTask(relay.url, carol, alice, 'Schema for the importer', {
      artifacts: [{ type: 'file_ref', path: `db/${word}-schema.sql` }],
    });
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it('answers tasks/list items with highlights, only of tasks the caller takes part in', async () => {
    const result = await ok(relay.url, alice.api_key, 'tasks/search', { query: word });
    expect(idsOf(result).sort()).toEqual([aliceToBob, carolToAlice].sort());
    const hit = result.items.find((item: Json) => item.task_id === aliceToBob);
    expect(hit).toEqual({
      thread_id: aliceToBob,
      task_id: aliceToBob,
      status: { state: 'pending' },
      sender: { handle: alice.agent.handle, name: 'Alice', role: null },
      summary_preview: `The ${word} importer drops rows`,
      intent: 'inform',
      recipient: bob.agent.handle,
      unread_messages: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      highlights: [{ source: 'message', sequence_no: 1, fragments: expect.arrayContaining([{ text: word, match: true }]) }],
    });
    expect(result.next_cursor).toBeNull();
    const artifactHit = result.items.find((item: Json) => item.task_id === carolToAlice);
    expect(artifactHit.highlights[0]).toMatchObject({ source: 'artifact', artifact_name: `db/${word}-schema.sql` });
  });

  it('never shows a stranger, or a participant of other tasks, anything of the tasks it does not take part in', async () => {
    expect(idsOf(await ok(relay.url, stranger.api_key, 'tasks/search', { query: word }))).toEqual([]);
    expect(idsOf(await ok(relay.url, carol.api_key, 'tasks/search', { query: word })).sort()).toEqual([bobToCarol, carolToAlice].sort());
    expect(idsOf(await ok(relay.url, bob.api_key, 'tasks/search', { query: `${word} OR importer` })).sort()).toEqual([aliceToBob, bobToCarol].sort());
    // On an agent's endpoint only the tasks between the caller and that agent.
    const onEndpoint = await rpc(relay.url, bob.api_key, 'tasks/search', { query: word }, { path: `/a2a/${carol.agent.handle}` });
    expect(idsOf(onEndpoint.body.result as Json)).toEqual([bobToCarol]);
  });

  it('filters by role and status, and pages with a cursor', async () => {
    expect(idsOf(await ok(relay.url, alice.api_key, 'tasks/search', { query: word, filter: { role: 'sender' } }))).toEqual([aliceToBob]);
    expect(idsOf(await ok(relay.url, alice.api_key, 'tasks/search', { query: word, filter: { role: 'recipient' } }))).toEqual([carolToAlice]);
    expect(idsOf(await ok(relay.url, alice.api_key, 'tasks/search', { query: word, filter: { status: ['completed'] } }))).toEqual([]);
    const first = await ok(relay.url, alice.api_key, 'tasks/search', { query: word, page: { limit: 1 } });
    expect(first.items).toHaveLength(1);
    const second = await ok(relay.url, alice.api_key, 'tasks/search', { query: word, page: { limit: 1, cursor: first.next_cursor } });
    expect([...idsOf(first), ...idsOf(second)].sort()).toEqual([aliceToBob, carolToAlice].sort());
    expect(second.next_cursor).toBeNull();
  });

  it('answers -32602 naming the param for a missing or blank query, a bad role, status, limit or cursor', async () => {
    for (const [params, field] of [
      [{}, 'query'],
      [{ query: '   ' }, 'query'],
      [{ query: word, filter: { role: 'boss' } }, 'filter.role'],
      [{ query: word, filter: { status: ['open'] } }, 'filter.status'],
      [{ query: word, page: { limit: 0 } }, 'page.limit'],
      [{ query: word, page: { cursor: 'garbage' } }, 'cursor'],
    ] as Array<[Json, string]>) {
      const response = await rpc(relay.url, alice.api_key, 'tasks/search', params);
      expect(response.status).toBe(200);
      expectRpcError(response.body.error, { code: -32602, field });
    }
    const v1 = await rpc(relay.url, alice.api_key, 'tasks/search', { query: word }, { headers: { 'a2a-version': '1.0' } });
    expect(idsOf(v1.body.result as Json).sort()).toEqual([aliceToBob, carolToAlice].sort());
  });

  it('is the relay client call searchTasks', async () => {
    const client = new RelayClient({ url: relay.url, apiKey: carol.api_key });
    const page = await client.searchTasks(word, { role: 'sender' });
    expect(page.items.map((item) => item.task_id)).toEqual([carolToAlice]);
    expect(page.items[0].highlights[0].source).toBe('artifact');
  });

  it('is agentrelay search <words> in the CLI', async () => {
    let stdout = '';
    const code = await run(
      ['search', word, 'importer'],
      { RELAY_URL: relay.url, AGENTRELAY_API_KEY: bob.api_key },
      { stdout: (text) => (stdout += text), stderr: () => undefined },
    );
    expect(code).toBe(0);
    expect(stdout).toContain(aliceToBob);
    expect(stdout).toContain(`«${word}»`);
    expect(stdout).not.toContain(carolToAlice);
    let json = '';
    await run(
      ['search', word, '--json'],
      { RELAY_URL: relay.url, AGENTRELAY_API_KEY: stranger.api_key },
      { stdout: (text) => (json += text), stderr: () => undefined },
    );
    expect(JSON.parse(json)).toEqual({ items: [], next_cursor: null });
  });

  it(
    'is the MCP tool search_handoffs',
    async () => {
      const mcp = await McpAgent.start(relay.url, alice.api_key);
      try {
        const { text, data } = await mcp.ok<{ tasks: Json[]; has_more: boolean }>('search_handoffs', { query: word, role: 'recipient' });
        expect(data.tasks.map((task) => task.task_id)).toEqual([carolToAlice]);
        expect(text).toContain(carolToAlice);
        expect(text).toContain(`«${word}»`);
        const none = await mcp.ok<{ tasks: Json[] }>('search_handoffs', { query: 'nothingmatchesthisword' });
        expect(none.data.tasks).toEqual([]);
      } finally {
        await mcp.close();
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );
});
