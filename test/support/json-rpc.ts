import request from 'supertest';

/** Loosely typed JSON, for asserting response shapes in tests. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = Record<string, any>;

export interface RpcResponse {
  status: number;
  headers: Record<string, string>;
  body: { jsonrpc: '2.0'; id: string | number | null; result?: Json; error?: { code: number; message: string; data?: unknown } };
}

/** One JSON-RPC call to `POST {url}{path}` with an agent key; extra headers optional. */
export async function rpc(
  url: string,
  apiKey: string | undefined,
  method: string,
  params: unknown,
  options: { id?: string | number | null; path?: string; headers?: Record<string, string> } = {},
): Promise<RpcResponse> {
  let call = request(url).post(options.path ?? '/a2a');
  if (apiKey !== undefined) call = call.set('authorization', `Bearer ${apiKey}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) call = call.set(name, value);
  const response = await call.send({ jsonrpc: '2.0', id: options.id === undefined ? 'req-1' : options.id, method, params });
  return { status: response.status, headers: response.headers as Record<string, string>, body: response.body };
}

/** One A2A v1.0 call (`A2A-Version: 1.0`) with an agent key, which must answer HTTP 200: the JSON-RPC body, with its result or error. */
export async function a2aV1(url: string, apiKey: string, method: string, params: unknown, path = '/a2a'): Promise<Json> {
  const response = await rpc(url, apiKey, method, params, { path, headers: { 'a2a-version': '1.0' } });
  expect(response.status).toBe(200);
  return response.body as Json;
}

/** The result of a call that must succeed. */
export async function ok(url: string, apiKey: string, method: string, params: unknown): Promise<Json> {
  const response = await rpc(url, apiKey, method, params);
  if (response.status !== 200 || response.body.error) throw new Error(`${method} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.result as Json;
}

/**
 * What a test checks in a JSON-RPC error: `reason` is the relay's error symbol, `field` the param
 * an invalid-params error names, `shape` how the details were rendered (`error-info` in A2A v1.0,
 * `data` in AgentRelay and A2A v0.3).
 */
export interface ExpectedRpcError {
  code: number;
  reason?: string;
  field?: string;
  shape?: 'error-info' | 'data';
}

/**
 * Reads a JSON-RPC error the same way whichever dialect rendered it: AgentRelay and A2A v0.3 carry
 * the relay's symbol and the offending field in `data.reason` / `data.field`, A2A v1.0 in the
 * metadata of the google.rpc.ErrorInfo in `data[0]` (`relay_reason`, `field`).
 */
export function rpcErrorFacts(error: unknown): { code: unknown; message: unknown; shape: 'error-info' | 'data'; reason?: unknown; field?: unknown } {
  if (typeof error !== 'object' || error === null) throw new Error(`expected a JSON-RPC error object, got ${JSON.stringify(error)}`);
  const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
  const shape = Array.isArray(data) ? 'error-info' : 'data';
  const details = (shape === 'error-info' ? (data as Array<{ metadata?: Json }>)[0]?.metadata : data) as Json | undefined;
  const reason = shape === 'error-info' ? details?.relay_reason : details?.reason;
  return { code, message, shape, ...(reason !== undefined ? { reason } : {}), ...(details?.field !== undefined ? { field: details.field } : {}) };
}

/** Asserts a JSON-RPC error's code and, when given, its symbol, field and shape, in any dialect; a mismatch shows what the error held. */
export function expectRpcError(error: unknown, expected: ExpectedRpcError): void {
  expect(rpcErrorFacts(error)).toMatchObject(expected);
}
