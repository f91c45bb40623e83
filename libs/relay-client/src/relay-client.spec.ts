import { adviceFor, RelayClientError } from './relay-client-error';
import { RelayClient } from './relay-client';

interface Recorded {
  url: string;
  body: { method: string; params: Record<string, unknown> } | undefined;
  authorization: string | null;
}

function fakeFetch(responses: Array<Response | Error>): { fetch: typeof fetch; calls: Recorded[] } {
  const calls: Recorded[] = [];
  const fetchImpl = (async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({
      url: String(url),
      body: init?.body ? JSON.parse(String(init.body)) : undefined,
      authorization: new Headers(init?.headers).get('authorization'),
    });
    const next = responses.shift();
    if (!next) throw new Error('no more responses');
    if (next instanceof Error) throw next;
    return next;
  }) as typeof fetch;
  return { fetch: fetchImpl, calls };
}

function rpcResult(result: unknown): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: 1, result }), { status: 200 });
}

function rpcError(status: number, code: number, message: string, data: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message, data } }), { status, headers });
}

const unreachable = (): Error => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } });

describe('RelayClient', () => {
  it('creates a handoff in the AgentRelay shape with the key in metadata.client_idempotency_key', async () => {
    const { fetch, calls } = fakeFetch([rpcResult({ task_id: 'T1', status: { state: 'pending' }, created_at: '2026-01-01T00:00:00Z' })]);
    const client = new RelayClient({ url: 'http://relay.test/', apiKey: 'ah_live_KEY', fetch });
    const created = await client.createTask({
      recipient: 'frank@acme',
      text: 'Refactored /users',
      artifacts: [{ type: 'file_diff', path: 'a.ts', diff: '@@ -1 +1 @@' }],
      idempotencyKey: 'key-1',
    });
    expect(created).toEqual({ task_id: 'T1', status: { state: 'pending' }, created_at: '2026-01-01T00:00:00Z', idempotency_key: 'key-1' });
    expect(calls[0].url).toBe('http://relay.test/a2a');
    expect(calls[0].authorization).toBe('Bearer ah_live_KEY');
    expect(calls[0].body).toMatchObject({
      method: 'message/send',
      params: {
        recipient: 'frank@acme',
        intent: 'inform',
        message: { role: 'user', parts: [{ type: 'text', text: 'Refactored /users' }] },
        artifacts: [{ type: 'file_diff', path: 'a.ts', diff: '@@ -1 +1 @@' }],
        proposed_action: null,
        metadata: { client_idempotency_key: 'key-1' },
      },
    });
  });

  it('retries a send after a transient failure with the same idempotency key', async () => {
    const { fetch, calls } = fakeFetch([
      unreachable(),
      rpcError(503, -32050, 'A relay service is unavailable (no responders)', { reason: 'service_unavailable' }),
      rpcResult({ task_id: 'T2', status: { state: 'pending' }, created_at: '2026-01-01T00:00:00Z' }),
    ]);
    const client = new RelayClient({ url: 'http://relay.test', apiKey: 'k', fetch, retryDelayMs: 1 });
    const created = await client.createTask({ recipient: 'frank@acme', text: 'hi' });
    expect(created.task_id).toBe('T2');
    expect(calls).toHaveLength(3);
    const keys = calls.map((call) => (call.body?.params.metadata as { client_idempotency_key: string }).client_idempotency_key);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBe(created.idempotency_key);
  });

  it('does not repeat a transition after a transient failure', async () => {
    const { fetch, calls } = fakeFetch([unreachable()]);
    const client = new RelayClient({ url: 'http://relay.test', apiKey: 'k', fetch, retryDelayMs: 1 });
    await expect(client.transition('T1', 'accept', { sessionId: 's-1' })).rejects.toMatchObject({ failure: 'unreachable', reason: 'unreachable' });
    expect(calls).toHaveLength(1);
  });

  it('names the relay error symbol, code and data of a JSON-RPC error', async () => {
    const { fetch } = fakeFetch([
      rpcError(200, -32007, 'The thread is completed; no more messages can be added', { reason: 'thread_terminal', state: 'completed' }),
    ]);
    const client = new RelayClient({ url: 'http://relay.test', apiKey: 'k', fetch });
    const error = (await client.appendMessage('T1', 'more').catch((caught: unknown) => caught)) as RelayClientError;
    expect(error).toBeInstanceOf(RelayClientError);
    expect(error).toMatchObject({ failure: 'relay_error', reason: 'thread_terminal', details: { code: -32007, httpStatus: 200 } });
    expect(adviceFor(error)).toBe('The thread is completed; start a new handoff instead of replying.');
  });

  it('reports a refused key as unauthenticated', async () => {
    const { fetch } = fakeFetch([rpcError(401, -32000, 'Missing or invalid API key', { reason: 'unauthenticated' })]);
    const client = new RelayClient({ url: 'http://relay.test', apiKey: 'bad', fetch });
    const error = (await client.listTasks({ role: 'recipient' }).catch((caught: unknown) => caught)) as RelayClientError;
    expect(error.unauthorized).toBe(true);
    expect(adviceFor(error)).toMatch(/AGENTRELAY_API_KEY/);
  });

  it('sends the list filter and page in the AgentRelay shape', async () => {
    const { fetch, calls } = fakeFetch([rpcResult({ items: [], next_cursor: null })]);
    const client = new RelayClient({ url: 'http://relay.test', apiKey: 'k', fetch });
    await client.listTasks({ role: 'sender', status: ['pending', 'accepted'], since: '2026-01-01T00:00:00Z', limit: 10 });
    expect(calls[0].body?.params).toEqual({
      filter: { role: 'sender', status: ['pending', 'accepted'], since: '2026-01-01T00:00:00Z' },
      page: { limit: 10, cursor: null },
    });
  });

  it('reads a public card and answers null for an unknown handle', async () => {
    const card = { id: 'frank@acme', name: 'Frank', description: null, endpoint: 'http://relay.test/a2a', skills: ['react'], metadata: {} };
    const { fetch, calls } = fakeFetch([
      new Response(JSON.stringify(card), { status: 200 }),
      new Response(JSON.stringify({ error: { reason: 'agent_not_found' } }), { status: 404 }),
    ]);
    const client = new RelayClient({ url: 'http://relay.test', apiKey: 'k', fetch });
    await expect(client.agentCard('frank@acme')).resolves.toEqual(card);
    await expect(client.agentCard('nobody@acme')).resolves.toBeNull();
    expect(calls[0].url).toBe('http://relay.test/.well-known/agent-card.json?id=frank%40acme');
    expect(calls[0].authorization).toBeNull();
  });
});
