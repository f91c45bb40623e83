/**
 * Benchmark: starts a relay from dist/ as four real processes on loopback (own database, own
 * subject prefix, rate limit raised), then measures throughput and latency of the main calls with
 * a bounded number of requests at a fixed concurrency. Compare the ratios between rows of one run;
 * absolute numbers depend on the machine's load.
 *
 *   npm run bench                      # defaults: 400 requests per scenario, concurrency 8
 *   BENCH_REQUESTS=1000 BENCH_CONCURRENCY=16 npm run bench
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { dropDatabase, ensureDatabaseExists } from '@app/database';
import { deleteEventStream, openJetStream } from '@app/messaging';
import { rateLimitStreamName } from '../../apps/edge/src/rate-limit/rate-limiter';
import { migrateAllSchemas } from '../migrate-all';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PORT = Number(process.env.BENCH_PORT ?? 18080);
const ADMIN_TOKEN = `bench_${randomBytes(16).toString('hex')}`;
const BASE = `http://127.0.0.1:${PORT}`;

interface ScenarioResult {
  name: string;
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function post(path: string, body: unknown, headers: Record<string, string>): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${BASE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

async function runScenario(name: string, call: (index: number) => Promise<boolean>): Promise<ScenarioResult> {
  const latenciesMs: number[] = [];
  let next = 0;
  let errors = 0;
  const startedAt = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        const index = next++;
        const began = performance.now();
        const ok = await call(index).catch(() => false);
        latenciesMs.push(performance.now() - began);
        if (!ok) errors++;
      }
    }),
  );
  return { name, requests: REQUESTS, errors, seconds: (performance.now() - startedAt) / 1000, latenciesMs: latenciesMs.sort((a, b) => a - b) };
}

function startProcesses(env: Record<string, string>): ChildProcess[] {
  return ['directory', 'tasks', 'notifier', 'edge'].map((service) =>
    spawn(process.execPath, [`dist/apps/${service}/src/main.js`], { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'inherit'] }),
  );
}

async function waitUntilReady(timeoutMs = 30000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ready = await fetch(`${BASE}/readyz`).then((response) => response.ok).catch(() => false);
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error('the relay did not become ready');
}

async function registerAgent(handle: string): Promise<string> {
  const { status, json } = await post('/admin/agents', { handle, name: handle.split('@')[0] }, { authorization: `Bearer ${ADMIN_TOKEN}` });
  if (status !== 201) throw new Error(`registering ${handle} answered ${status}`);
  return json.api_key as string;
}

async function main(): Promise<void> {
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/relay_bench_${Date.now().toString(36)}`;
  await ensureDatabaseExists(databaseUrl);
  await migrateAllSchemas(databaseUrl);
  const subjectPrefix = `bench_${randomBytes(4).toString('hex')}`;
  const children = startProcesses({
    DATABASE_URL: databaseUrl,
    NATS_SUBJECT_PREFIX: subjectPrefix,
    RELAY_MIGRATE_ON_START: 'false',
    RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
    RELAY_RATE_LIMIT_PER_MINUTE: '100000',
    EDGE_PORT: String(PORT),
    EDGE_HOST: '127.0.0.1',
    RELAY_PUBLIC_URL: BASE,
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
  });
  try {
    await waitUntilReady();
    const org = `bench${randomBytes(3).toString('hex')}`;
    const senderKey = await registerAgent(`bob@${org}`);
    const recipientKey = await registerAgent(`frank@${org}`);
    const asSender = { authorization: `Bearer ${senderKey}` };
    const taskIds: string[] = [];

    const results: ScenarioResult[] = [];
    results.push(
      await runScenario('readyz (edge → 3 services over NATS → Postgres)', async () => (await fetch(`${BASE}/readyz`)).ok),
    );
    results.push(
      await runScenario('AgentRelay message/send (create handoff)', async (index) => {
        const { json } = await post(
          '/a2a',
          {
            jsonrpc: '2.0',
            id: index,
            method: 'message/send',
            params: { recipient: `frank@${org}`, message: { role: 'user', parts: [{ type: 'text', text: `handoff ${index}` }] } },
          },
          asSender,
        );
        const result = json.result as { task_id?: string } | undefined;
        if (result?.task_id) taskIds.push(result.task_id);
        return Boolean(result?.task_id);
      }),
    );
    results.push(
      await runScenario('AgentRelay tasks/get (full thread)', async (index) => {
        const { json } = await post('/a2a', { jsonrpc: '2.0', id: index, method: 'tasks/get', params: { task_id: taskIds[index % taskIds.length] } }, asSender);
        return json.result !== undefined;
      }),
    );
    results.push(
      await runScenario('AgentRelay tasks/list (inbox page of 50)', async (index) => {
        const { json } = await post(
          '/a2a',
          { jsonrpc: '2.0', id: index, method: 'tasks/list', params: { filter: { role: 'recipient' }, page: { limit: 50 } } },
          { authorization: `Bearer ${recipientKey}` },
        );
        return json.result !== undefined;
      }),
    );
    results.push(
      await runScenario('A2A v1.0 SendMessage on /a2a/{handle} (returnImmediately)', async (index) => {
        const { json } = await post(
          `/a2a/frank@${org}`,
          {
            jsonrpc: '2.0',
            id: index,
            method: 'SendMessage',
            params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `v1 ${index}` }] }, configuration: { returnImmediately: true } },
          },
          { ...asSender, 'a2a-version': '1.0' },
        );
        return json.result !== undefined;
      }),
    );
    results.push(
      await runScenario('AgentRelay tasks/update accept (state machine)', async (index) => {
        const taskId = taskIds[index];
        if (!taskId) return false;
        const { json } = await post(
          '/a2a',
          { jsonrpc: '2.0', id: index, method: 'tasks/update', params: { task_id: taskId, transition: 'accept' } },
          { authorization: `Bearer ${recipientKey}` },
        );
        return json.result !== undefined;
      }),
    );

    console.log(`\nAgentRelay benchmark — ${REQUESTS} requests per scenario, concurrency ${CONCURRENCY}, node ${process.version}\n`);
    console.log('| scenario | req/s | p50 ms | p95 ms | p99 ms | errors |');
    console.log('|---|---:|---:|---:|---:|---:|');
    for (const result of results) {
      const rate = result.requests / result.seconds;
      console.log(
        `| ${result.name} | ${rate.toFixed(0)} | ${percentile(result.latenciesMs, 50).toFixed(1)} | ${percentile(result.latenciesMs, 95).toFixed(1)} | ${percentile(result.latenciesMs, 99).toFixed(1)} | ${result.errors} |`,
      );
    }
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await Promise.all(children.map((child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)))));
    await dropDatabase(databaseUrl);
    const jetStream = await openJetStream({ url: 'nats://127.0.0.1:4222', name: 'bench-cleanup' });
    await deleteEventStream(jetStream.jsm, subjectPrefix);
    await jetStream.jsm.streams.delete(rateLimitStreamName(subjectPrefix)).catch(() => undefined);
    await jetStream.connection.drain();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
