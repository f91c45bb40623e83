/**
 * The floor: the least a durable "record a task and answer" can cost here — `node:http`, a JSON
 * parse, one `pg` INSERT per request (autocommit), a JSON reply. Speaks just enough A2A v1.0
 * JSON-RPC for the bench: `SendMessage` inserts a row, `GetTask` reads one by primary key.
 *
 *   BENCH_PORT=… DATABASE_URL=… node dist/scripts/bench/baselines/floor-server.js
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import pg from 'pg';

const PORT = Number(process.env.BENCH_PORT ?? 18091);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: 'bench-floor' });

interface RpcRequest {
  id?: unknown;
  method?: string;
  params?: { message?: { messageId?: string; contextId?: string }; id?: string };
}

async function answer(request: RpcRequest): Promise<unknown> {
  if (request.method === 'SendMessage' || request.method === 'message/send') {
    const id = randomUUID();
    const contextId = request.params?.message?.contextId ?? randomUUID();
    await pool.query({
      name: 'floor-insert',
      text: 'INSERT INTO bench_floor_tasks (id, context_id, message) VALUES ($1, $2, $3)',
      values: [id, contextId, JSON.stringify(request.params?.message ?? {})],
    });
    return { task: { id, contextId, status: { state: 'TASK_STATE_SUBMITTED' } } };
  }
  if (request.method === 'GetTask' || request.method === 'tasks/get') {
    const { rows } = await pool.query({
      name: 'floor-get',
      text: 'SELECT id, context_id, message FROM bench_floor_tasks WHERE id = $1',
      values: [request.params?.id],
    });
    if (rows.length === 0) throw Object.assign(new Error('task not found'), { code: -32001 });
    const row = rows[0] as { id: string; context_id: string; message: unknown };
    return { id: row.id, contextId: row.context_id, status: { state: 'TASK_STATE_SUBMITTED' }, history: [row.message] };
  }
  throw Object.assign(new Error('method not found'), { code: -32601 });
}

async function main(): Promise<void> {
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_floor_tasks (id uuid PRIMARY KEY, context_id text NOT NULL, message jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())',
  );
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let request: RpcRequest = {};
      const reply = (body: unknown): void => {
        const text = JSON.stringify(body);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
        res.end(text);
      };
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcRequest;
      } catch {
        reply({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } });
        return;
      }
      answer(request).then(
        (result) => reply({ jsonrpc: '2.0', id: request.id ?? null, result }),
        (error: Error & { code?: number }) =>
          reply({ jsonrpc: '2.0', id: request.id ?? null, error: { code: typeof error.code === 'number' ? error.code : -32603, message: error.message } }),
      );
    });
  });
  server.keepAliveTimeout = 10 * 60 * 1000;
  server.listen(PORT, '127.0.0.1', () => console.log(`ready ${PORT}`));
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void pool.end().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
