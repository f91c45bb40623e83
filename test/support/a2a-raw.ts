import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './agents';
import type { Json } from './json-rpc';
import { RelayHarness } from './relay-harness';
import { openSse, type SseEvent, type SseStream } from './sse';

/** An SSE stream opened by a JSON-RPC call, with the id that call used. */
export type RawStream = SseStream & { id: number };

/** A v1.0 message from the sender's side, with a fresh messageId. */
export function message(text: string, extra: Json = {}): Json {
  return { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra };
}

/** The google.rpc.ErrorInfo a v1.0 error carries in `data[0]`. */
export function errorInfo(error: Json): Json {
  expect(Array.isArray(error.data)).toBe(true);
  return error.data[0] as Json;
}

/** The next event of a stream: a plain data event repeating the request id; returns its result. */
export async function expectNext(events: RawStream): Promise<Json> {
  const event = (await events.next()) as SseEvent;
  expect(event).toBeDefined();
  expect(event.event).toBeUndefined();
  expect(event.data).toMatchObject({ jsonrpc: '2.0', id: events.id });
  return event.data.result as Json;
}

/**
 * Raw JSON-RPC against one relay's standard A2A surface, for the a2a-raw-*.e2e-spec files: each
 * file starts its own relay (`start`), registers agents in an org of its own and calls the
 * endpoints with supertest. The methods are arrow functions, so a spec can destructure them.
 */
export class A2aRawClient {
  relay!: RelayHarness;
  /** The org of every agent this client registers. */
  readonly org = `raw${randomUUID().slice(0, 6)}`;
  private sequence = 0;

  async start(): Promise<RelayHarness> {
    this.relay = await RelayHarness.start();
    return this.relay;
  }

  async stop(): Promise<void> {
    await this.relay.stop();
  }

  /** The next JSON-RPC id. */
  nextId = (): number => ++this.sequence;

  agent = (name: string): Promise<RegisteredTestAgent> =>
    registerAgent(this.relay, { handle: uniqueHandle(name, this.org), name: name[0].toUpperCase() + name.slice(1) });

  call = async (
    agent: RegisteredTestAgent,
    path: string,
    method: string,
    params: unknown,
    version?: string,
    baseUrl = this.relay.url,
  ): Promise<{ status: number; body: Json }> => {
    const http = request(baseUrl).post(path).set('x-api-key', agent.api_key);
    if (version !== undefined) http.set('a2a-version', version);
    const response = await http.send({ jsonrpc: '2.0', id: this.nextId(), method, params });
    return { status: response.status, body: response.body as Json };
  };

  /** A v1.0 call that must succeed; returns its result. */
  v1 = async (agent: RegisteredTestAgent, path: string, method: string, params: unknown, baseUrl?: string): Promise<Json> => {
    const { status, body } = await this.call(agent, path, method, params, '1.0', baseUrl);
    if (status !== 200 || body.error) throw new Error(`${method} answered ${status}: ${JSON.stringify(body.error ?? body)}`);
    return body.result as Json;
  };

  /** A v1.0 call that must fail; returns the JSON-RPC error. */
  v1Error = async (agent: RegisteredTestAgent, path: string, method: string, params: unknown, baseUrl?: string): Promise<Json> => {
    const { body } = await this.call(agent, path, method, params, '1.0', baseUrl);
    if (!body.error) throw new Error(`${method} unexpectedly answered ${JSON.stringify(body.result)}`);
    return body.error as Json;
  };

  /** Creates a task from `from` at `to`'s endpoint without blocking; returns the v1.0 Task. */
  newTask = async (from: RegisteredTestAgent, to: RegisteredTestAgent, text: string, extra: Json = {}): Promise<Json> => {
    const result = await this.v1(from, `/a2a/${to.agent.handle}`, 'SendMessage', { message: message(text, extra), configuration: { returnImmediately: true } });
    return result.task as Json;
  };

  /** An AgentRelay call on `POST /a2a` that must succeed; returns its result. */
  agentRelay = async (agent: RegisteredTestAgent, method: string, params: Json): Promise<Json> => {
    const { body } = await this.call(agent, '/a2a', method, params);
    if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
    return body.result as Json;
  };

  getTask = (agent: RegisteredTestAgent, id: string, extra: Json = {}): Promise<Json> => this.v1(agent, '/a2a', 'GetTask', { id, ...extra });

  /** Opens an SSE stream with a JSON-RPC call (A2A-Version when given). */
  stream = async (
    agent: RegisteredTestAgent,
    path: string,
    method: string,
    params: unknown,
    version?: string,
    options: { lastEventId?: string; baseUrl?: string } = {},
  ): Promise<RawStream> => {
    const id = this.nextId();
    const opened = await openSse(
      `${options.baseUrl ?? this.relay.url}${path}`,
      {
        'x-api-key': agent.api_key,
        ...(version !== undefined ? { 'a2a-version': version } : {}),
        ...(options.lastEventId !== undefined ? { 'last-event-id': options.lastEventId } : {}),
      },
      { jsonrpc: '2.0', id, method, params },
    );
    return Object.assign(opened, { id });
  };
}
