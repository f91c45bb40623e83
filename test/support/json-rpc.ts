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

/** The result of a call that must succeed. */
export async function ok(url: string, apiKey: string, method: string, params: unknown): Promise<Json> {
  const response = await rpc(url, apiKey, method, params);
  if (response.status !== 200 || response.body.error) throw new Error(`${method} failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.result as Json;
}
