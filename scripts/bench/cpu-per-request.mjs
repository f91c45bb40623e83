/* global AbortController, TextDecoder */
// CPU time per request of each relay process: starts a relay from a built tree (dist/ of this
// checkout, or of another one given as the first argument, to compare two builds on one machine),
// sends BENCH_REQUESTS creates (AgentRelay message/send) at BENCH_CONCURRENCY, and reads each
// process's user+system CPU time from /proc before and after. CPU time per request moves far less
// with the machine's load than throughput does. Linux only. With BENCH_CONSOLE_STREAMS=N, N console
// streams (`GET /admin/events`) follow every event meanwhile: the edge's extra CPU over a run
// without them, divided by the events they received, is the console stream's cost per task event.
// BENCH_AUTH picks how the sender authenticates: `key` (its API key, the default), `jwt` (one bearer
// JWT of an identity provider for the whole run: the edge's verified-token cache) or `jwt-fresh` (a
// new JWT on every request: a full signature verification each time). The identity provider is this
// script: a discovery document and a JWKS on a loopback port, tokens signed with jose (ES256).
// BENCH_LINK picks whether each create names a parent (docs/chains.md): `none` (the default),
// `parent` (`parent_task_id`) or `trace` (no parent named, a `traceparent` in the parent's trace).
// The parents are roots a third agent handed the sender, each in a trace of its own, given out
// round-robin so that no chain gets more than CHILDREN_PER_ROOT creates (below the default budget).
//
//   npm run build && node scripts/bench/cpu-per-request.mjs [root]
//   BENCH_CONSOLE_STREAMS=4 node scripts/bench/cpu-per-request.mjs
//   BENCH_AUTH=jwt node scripts/bench/cpu-per-request.mjs
//   BENCH_LINK=parent node scripts/bench/cpu-per-request.mjs
import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { resolve } from 'node:path';
import { performance } from 'node:perf_hooks';

const ROOT = resolve(process.argv[2] ?? '.');
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 1000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const PORT = Number(process.env.BENCH_PORT ?? 18180);
const IDLE_MS = 10_000;
const CONSOLE_STREAMS = Number(process.env.BENCH_CONSOLE_STREAMS ?? 0);
const BASE = `http://127.0.0.1:${PORT}`;
const AUTH = process.env.BENCH_AUTH ?? 'key';
if (!['key', 'jwt', 'jwt-fresh'].includes(AUTH)) throw new Error(`BENCH_AUTH must be key, jwt or jwt-fresh, not ${AUTH}`);
const LINK = process.env.BENCH_LINK ?? 'none';
if (!['none', 'parent', 'trace'].includes(LINK)) throw new Error(`BENCH_LINK must be none, parent or trace, not ${LINK}`);
/** Creates one chain root is given at most: below the relay's default chain budget (100 handoffs in a tree, its root included). */
const CHILDREN_PER_ROOT = 90;
const WARMUP = 50;
const TOKEN_AUDIENCE = 'https://relay.bench.agentrelay';
const SERVICES = ['directory', 'tasks', 'notifier', 'edge'];
const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());

/** User + system CPU seconds of a process so far (fields 14 and 15 of /proc/<pid>/stat). */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

async function post(path, body, headers) {
  const response = await fetch(`${BASE}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, json: await response.json() };
}

/** Follows `GET /admin/events` and counts the task events it receives, until aborted. */
function followConsoleEvents(adminToken, signal, counter) {
  return fetch(`${BASE}/admin/events`, { headers: { authorization: `Bearer ${adminToken}`, accept: 'text/event-stream' }, signal })
    .then(async (response) => {
      if (!response.ok) throw new Error(`GET /admin/events answered ${response.status}`);
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          if (buffer.slice(0, end).includes('event: task')) counter.events += 1;
          buffer = buffer.slice(end + 2);
        }
      }
    })
    .catch((error) => {
      if (!signal.aborted) throw error;
    });
}

/** The bench's identity provider: discovery and JWKS on a loopback port, and tokens signed with its key (jose). */
async function startIdentityProvider() {
  const { exportJWK, generateKeyPair, SignJWT } = await import('jose');
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'bench', alg: 'ES256', use: 'sig' };
  const server = createServer((request, response) => {
    const issuer = `http://127.0.0.1:${server.address().port}`;
    const documents = {
      '/.well-known/openid-configuration': { issuer, jwks_uri: `${issuer}/jwks`, token_endpoint: `${issuer}/token` },
      '/jwks': { keys: [jwk] },
    };
    const document = documents[request.url];
    response.writeHead(document ? 200 : 404, { 'content-type': 'application/json' }).end(JSON.stringify(document ?? {}));
  });
  await new Promise((done) => server.listen(0, '127.0.0.1', done));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  return {
    issuer,
    token: (handle) =>
      new SignJWT({ agentrelay_handle: handle })
        .setProtectedHeader({ alg: 'ES256', kid: 'bench' })
        .setIssuer(issuer)
        .setAudience(TOKEN_AUDIENCE)
        .setSubject(`bench-${handle}`)
        .setIssuedAt()
        .setJti(randomBytes(8).toString('hex'))
        .setExpirationTime('1h')
        .sign(privateKey),
    close: () => new Promise((done) => server.close(done)),
  };
}

async function main() {
  const idp = AUTH === 'key' ? undefined : await startIdentityProvider();
  const adminToken = `bench_${randomBytes(16).toString('hex')}`;
  const env = {
    ...process.env,
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/relay_cpu_${Date.now().toString(36)}`,
    NATS_SUBJECT_PREFIX: `cpu_${randomBytes(4).toString('hex')}`,
    RELAY_MIGRATE_ON_START: 'false',
    RELAY_ADMIN_TOKEN: adminToken,
    RELAY_RATE_LIMIT_PER_MINUTE: '100000',
    RELAY_PAIR_HANDOFFS_PER_MINUTE: '100000',
    // The console streams all use the admin token, which counts as one console session.
    RELAY_ADMIN_EVENT_STREAMS_PER_SESSION: String(Math.max(4, CONSOLE_STREAMS)),
    RELAY_ADMIN_EVENT_STREAMS_PER_EDGE: String(Math.max(32, CONSOLE_STREAMS)),
    EDGE_PORT: String(PORT),
    EDGE_HOST: '127.0.0.1',
    RELAY_PUBLIC_URL: BASE,
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    RELAY_SECRET_KEYS: `cpu:${randomBytes(32).toString('base64')}`,
    // What the services send the notifier over NATS is sealed to its X25519 key.
    ...((pair) => ({
      RELAY_NOTIFIER_SEALING_KEYS: `cpu:${pair.privateKey.export({ format: 'jwk' }).d}`,
      RELAY_NOTIFIER_PUBLIC_KEY: `cpu:${pair.publicKey.export({ format: 'jwk' }).x}`,
    }))(generateKeyPairSync('x25519')),
    // Every delivery carries an assertion the notifier signs with a P-256 key; the edge publishes its public half.
    ...((pair) => {
      const { x, y } = pair.publicKey.export({ format: 'jwk' });
      const point = Buffer.concat([Buffer.from([4]), Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')]).toString('base64url');
      return { RELAY_ASSERTION_SIGNING_KEY: `cpu:${pair.privateKey.export({ format: 'jwk' }).d}`, RELAY_ASSERTION_PUBLIC_KEYS: `cpu:${point}` };
    })(generateKeyPairSync('ec', { namedCurve: 'P-256' })),
    ...(idp ? { RELAY_OIDC_ISSUERS: JSON.stringify([{ issuer: idp.issuer, audience: TOKEN_AUDIENCE }]) } : {}),
  };
  execFileSync(process.execPath, [`${ROOT}/dist/scripts/migrate.js`], { env, stdio: 'ignore' });
  const children = SERVICES.map((service) => [
    service,
    spawn(process.execPath, [`${ROOT}/dist/apps/${service}/src/main.js`], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'inherit'] }),
  ]);
  try {
    const deadline = Date.now() + 60_000;
    while (
      !(await fetch(`${BASE}/readyz`)
        .then((response) => response.ok)
        .catch(() => false))
    ) {
      if (Date.now() > deadline) throw new Error('the relay did not become ready');
      await new Promise((done) => setTimeout(done, 200));
    }
    const org = `cpu${randomBytes(3).toString('hex')}`;
    const keys = [];
    for (const handle of [`bob@${org}`, `frank@${org}`, `alice@${org}`]) {
      const { status, json } = await post('/admin/agents', { handle, name: handle.split('@')[0] }, { authorization: `Bearer ${adminToken}` });
      if (status !== 201) throw new Error(`registering ${handle} answered ${status}`);
      keys.push(json.api_key);
    }
    // The sender's credential: its API key, one JWT for the run, or a new JWT per request.
    const runToken = AUTH === 'jwt' ? await idp.token(`bob@${org}`) : undefined;
    const freshTokens = [];
    const credential = (index) => (AUTH === 'key' ? keys[0] : AUTH === 'jwt' ? runToken : freshTokens[index]);
    if (AUTH === 'jwt-fresh') for (let index = 0; index < REQUESTS + 50; index++) freshTokens.push(await idp.token(`bob@${org}`));
    const traceparent = (traceId) => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;
    // BENCH_LINK: the roots alice hands bob, each in a trace of its own; create `index` serves roots[index % roots.length].
    const roots = [];
    if (LINK !== 'none') {
      for (let count = Math.ceil((REQUESTS + WARMUP) / CHILDREN_PER_ROOT); roots.length < count;) {
        const traceId = randomBytes(16).toString('hex');
        const { json } = await post(
          '/a2a',
          {
            jsonrpc: '2.0',
            id: roots.length,
            method: 'message/send',
            params: { recipient: `bob@${org}`, message: { role: 'user', parts: [{ type: 'text', text: 'root' }] } },
          },
          { authorization: `Bearer ${keys[2]}`, traceparent: traceparent(traceId) },
        );
        if (!json.result?.task_id) throw new Error(`a chain root was refused: ${JSON.stringify(json)}`);
        roots.push({ taskId: json.result.task_id, traceId });
      }
    }
    const parentOf = (index) => roots[index % roots.length];
    const send = (index) =>
      post(
        '/a2a',
        {
          jsonrpc: '2.0',
          id: index,
          method: 'message/send',
          params: {
            recipient: `frank@${org}`,
            message: { role: 'user', parts: [{ type: 'text', text: `handoff ${index}` }] },
            ...(LINK === 'parent' ? { parent_task_id: parentOf(index).taskId } : {}),
          },
        },
        { authorization: `Bearer ${credential(index)}`, ...(LINK === 'trace' ? { traceparent: traceparent(parentOf(index).traceId) } : {}) },
      );
    /** A create counts when it made a task, linked to its parent when it names one. */
    const succeeded = (json, index) => Boolean(json.result?.task_id) && (LINK === 'none' || json.result.chain?.parent_task_id === parentOf(index).taskId);
    // Warm up (JIT, pools, first series of each metric), then measure.
    for (let index = 0; index < WARMUP; index++) await send(index);
    await new Promise((done) => setTimeout(done, 1000));
    // What each process burns idle (timers, default metrics' event-loop monitor, pollers), per second.
    const idleFrom = new Map(children.map(([service, child]) => [service, cpuSeconds(child.pid)]));
    await new Promise((done) => setTimeout(done, IDLE_MS));
    const idleMsPerSecond = Object.fromEntries(
      children.map(([service, child]) => [service, ((cpuSeconds(child.pid) - idleFrom.get(service)) * 1000) / (IDLE_MS / 1000)]),
    );
    const consoleAbort = new AbortController();
    const consoleEvents = { events: 0 };
    const consoleStreams = Array.from({ length: CONSOLE_STREAMS }, () => followConsoleEvents(adminToken, consoleAbort.signal, consoleEvents));
    await new Promise((done) => setTimeout(done, CONSOLE_STREAMS > 0 ? 1000 : 0));
    const before = new Map(children.map(([service, child]) => [service, cpuSeconds(child.pid)]));
    let next = 0;
    let errors = 0;
    const startedAt = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) {
          const index = WARMUP + next++;
          const { json } = await send(index);
          if (!succeeded(json, index)) errors++;
        }
      }),
    );
    const seconds = (performance.now() - startedAt) / 1000;
    // The outbox relay and the notifier finish the events of the last creates.
    await new Promise((done) => setTimeout(done, 2000));
    const cpuMs = Object.fromEntries(children.map(([service, child]) => [service, ((cpuSeconds(child.pid) - before.get(service)) * 1000) / REQUESTS]));
    consoleAbort.abort();
    await Promise.all(consoleStreams);
    const total = Object.values(cpuMs).reduce((sum, value) => sum + value, 0);
    console.log(
      JSON.stringify(
        {
          root: ROOT,
          auth: AUTH,
          link: LINK,
          requests: REQUESTS,
          concurrency: CONCURRENCY,
          errors,
          requests_per_second: Math.round(REQUESTS / seconds),
          cpu_ms_per_request: { ...cpuMs, total },
          idle_cpu_ms_per_second: idleMsPerSecond,
          ...(CONSOLE_STREAMS > 0 ? { console_streams: CONSOLE_STREAMS, console_events_received: consoleEvents.events } : {}),
        },
        (key, value) => (typeof value === 'number' ? Math.round(value * 1000) / 1000 : value),
      ),
    );
  } finally {
    for (const [, child] of children) child.kill('SIGTERM');
    await Promise.all(children.map(([, child]) => new Promise((done) => (child.exitCode !== null ? done() : child.once('exit', done)))));
    const { dropDatabase } = await import(`${ROOT}/dist/libs/database/src/index.js`);
    const { deleteEventStream, openJetStream } = await import(`${ROOT}/dist/libs/messaging/src/index.js`);
    await dropDatabase(env.DATABASE_URL);
    const jetStream = await openJetStream({ url: env.NATS_URL ?? 'nats://127.0.0.1:4222', name: 'cpu-bench-cleanup' });
    await deleteEventStream(jetStream.jsm, env.NATS_SUBJECT_PREFIX);
    // The run's other streams (the rate limiter's, the key cache's KV) carry its subject prefix in their names.
    for await (const stream of jetStream.jsm.streams.list())
      if (stream.config.name.includes(env.NATS_SUBJECT_PREFIX)) await jetStream.jsm.streams.delete(stream.config.name).catch(() => undefined);
    await jetStream.connection.drain();
    await idp?.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
