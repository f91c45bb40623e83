/**
 * The cost of one observation on the request path (what a request pays for metrics, apart from
 * scrapes and prom-client's default process metrics): the edge's HTTP observation, a handled NATS
 * request, and a caller's timed NATS request (less a bare await).
 *
 *   node --import ./test/support/process/register-ts.mjs scripts/bench/metrics-observe.ts
 */
import { Registry } from 'prom-client';
import { HttpMetrics, NatsClientMetrics, NatsHandlerMetrics } from '@app/metrics';

const N = Number(process.env.BENCH_OBSERVATIONS ?? 1_000_000);
const registry = new Registry();
const http = new HttpMetrics(registry);
const client = new NatsClientMetrics(registry);
const handler = new NatsHandlerMetrics(registry, 'prefix');

function nanosPerOp(startedAt: number): string {
  return (((performance.now() - startedAt) * 1e6) / N).toFixed(0);
}

async function main(): Promise<void> {
  let startedAt = performance.now();
  for (let i = 0; i < N; i++) http.observe('/a2a', 'send', 'agentrelay', 'ok', 200, 0.003);
  console.log(`HttpMetrics.observe: ${nanosPerOp(startedAt)} ns`);
  startedAt = performance.now();
  for (let i = 0; i < N; i++) handler.handled('prefix.relay.tasks.v1.send', 'ok', startedAt);
  console.log(`NatsHandlerMetrics.handled: ${nanosPerOp(startedAt)} ns`);
  const reply = Promise.resolve('reply');
  startedAt = performance.now();
  for (let i = 0; i < N; i++) await reply;
  const bare = performance.now() - startedAt;
  startedAt = performance.now();
  for (let i = 0; i < N; i++) await client.timed('relay.tasks.v1.send', startedAt, reply);
  console.log(`NatsClientMetrics.timed (beyond a bare await): ${(((performance.now() - startedAt - bare) * 1e6) / N).toFixed(0)} ns`);
}

void main();
