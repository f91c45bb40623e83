/**
 * The handoff floor: the least a handoff to an upstream A2A agent can cost in the relay's design,
 * for the `upstream` scenario to set beside the relay. Three processes as the relay has, each with
 * no framework and no work beyond the handoff itself, one role each (`BENCH_FLOOR_ROLE`):
 *
 * - `edge`: `node:http`. `GET` serves the upstream agent's card with its own URL in it; a
 *   `SendMessage` (JSON-RPC) asks `tasks` over NATS to store the task, waits for the task's
 *   `completed` event (a core subscription), and answers with the task the upstream agent answered.
 * - `tasks`: a NATS request stores the task (one `pg` INSERT, autocommit), is answered, and its
 *   `created` event goes to a file-backed JetStream stream (awaiting the acknowledgement); the
 *   answer is stored (one UPDATE) and its `completed` event published the same way.
 * - `notifier`: a durable pull consumer of `created` events; each one is a blocking `SendMessage`
 *   (`returnImmediately: false`) to the upstream agent over a kept connection, the answer sent to
 *   `tasks`, the event acknowledged after that.
 *
 * Two statements, two events and two NATS requests a handoff: none of what the relay adds (who
 * the caller is, rules and quotas, the delivery's own record, four events, following the task…).
 *
 *   BENCH_FLOOR_ROLE=… NATS_URL=… NATS_SUBJECT_PREFIX=… DATABASE_URL=… BENCH_UPSTREAM_URL=… node dist/scripts/bench/baselines/handoff-floor.js
 */
import { randomUUID } from 'node:crypto';
import http, { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AckPolicy, jetstream, jetstreamManager, StorageType, type JsMsg } from '@nats-io/jetstream';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';

const HANDOFF_FLOOR_APPLICATION = 'bench-handoff-floor';
const HANDOFF_FLOOR_ROLES = ['notifier', 'tasks', 'edge'] as const;
type HandoffFloorRole = (typeof HANDOFF_FLOOR_ROLES)[number];

/** The floor's subjects, under the bench's subject prefix (the bench deletes the prefix's streams when it ends). */
function floorSubjects(prefix: string) {
  return {
    stream: `FLOOR_${prefix.replace(/[^A-Za-z0-9_-]/g, '_')}`,
    events: `${prefix}.floor.events.>`,
    created: `${prefix}.floor.events.created`,
    completed: `${prefix}.floor.events.completed`,
    create: `${prefix}.floor.tasks.create`,
    complete: `${prefix}.floor.tasks.complete`,
  };
}

interface StoredEvent {
  id: string;
  message?: unknown;
  answer?: unknown;
}

const REQUEST_TIMEOUT_MS = 30000;

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function tasks(nc: NatsConnection, subjects: ReturnType<typeof floorSubjects>): Promise<() => Promise<void>> {
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: HANDOFF_FLOOR_APPLICATION });
  await pool.query(
    'CREATE TABLE IF NOT EXISTS bench_handoff_floor (id uuid PRIMARY KEY, message jsonb NOT NULL, state text NOT NULL, answer jsonb, ' +
      'created_at timestamptz NOT NULL DEFAULT now(), updated_at timestamptz NOT NULL DEFAULT now())',
  );
  const js = jetstream(nc);
  const publish = (subject: string, event: StoredEvent) => js.publish(subject, JSON.stringify(event), { msgID: randomUUID() });
  const serve = (subject: string, handle: (msg: Msg) => Promise<void>) =>
    nc.subscribe(subject, {
      callback: (error, msg) => {
        if (error) return;
        handle(msg).catch((failure: Error) => msg.respond(JSON.stringify({ error: failure.message })));
      },
    });
  serve(subjects.create, async (msg) => {
    const { message } = msg.json<{ message: unknown }>();
    const id = randomUUID();
    await pool.query({
      name: 'floor-create',
      text: "INSERT INTO bench_handoff_floor (id, message, state) VALUES ($1, $2, 'submitted')",
      values: [id, JSON.stringify(message)],
    });
    msg.respond(JSON.stringify({ id }));
    await publish(subjects.created, { id, message });
  });
  serve(subjects.complete, async (msg) => {
    const { id, answer } = msg.json<{ id: string; answer: unknown }>();
    const { rowCount } = await pool.query({
      name: 'floor-complete',
      text: "UPDATE bench_handoff_floor SET state = 'completed', answer = $2, updated_at = now() WHERE id = $1 AND state = 'submitted'",
      values: [id, JSON.stringify(answer)],
    });
    msg.respond(JSON.stringify({ stored: rowCount === 1 }));
    if (rowCount === 1) await publish(subjects.completed, { id, answer });
  });
  return () => pool.end();
}

async function notifier(nc: NatsConnection, subjects: ReturnType<typeof floorSubjects>): Promise<() => Promise<void>> {
  const upstream = new URL(process.env.BENCH_UPSTREAM_URL ?? '');
  const agent = new http.Agent({ keepAlive: true });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: subjects.stream, subjects: [subjects.events], storage: StorageType.File, max_age: 3600 * 1e9 });
  await jsm.consumers.add(subjects.stream, { durable_name: 'notifier', ack_policy: AckPolicy.Explicit, filter_subject: subjects.created });
  const consumer = await jetstream(nc).consumers.get(subjects.stream, 'notifier');
  let requestId = 0;
  const sendMessage = (message: Record<string, unknown>): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(
        JSON.stringify({
          jsonrpc: '2.0',
          id: ++requestId,
          method: 'SendMessage',
          params: { message: { ...message, messageId: randomUUID() }, configuration: { returnImmediately: false } },
        }),
      );
      const request = http.request(
        upstream,
        { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': body.length, 'a2a-version': '1.0' } },
        (response) => {
          readBody(response).then((bytes) => {
            const reply = JSON.parse(bytes.toString('utf8')) as { result?: unknown; error?: { message: string } };
            if (reply.error || reply.result === undefined) reject(new Error(`the upstream agent answered ${bytes.toString('utf8').slice(0, 200)}`));
            else resolve(reply.result);
          }, reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  const hand = async (event: JsMsg): Promise<void> => {
    const { id, message } = event.json<StoredEvent>();
    const answer = await sendMessage(message as Record<string, unknown>);
    await nc.request(subjects.complete, JSON.stringify({ id, answer }), { timeout: REQUEST_TIMEOUT_MS });
    event.ack();
  };
  const messages = await consumer.consume({ max_messages: 64 });
  void (async () => {
    for await (const event of messages) hand(event).catch(() => event.nak());
  })();
  return async () => {
    await messages.close();
    agent.destroy();
  };
}

async function edge(nc: NatsConnection, subjects: ReturnType<typeof floorSubjects>): Promise<() => Promise<void>> {
  const upstreamUrl = process.env.BENCH_UPSTREAM_URL ?? '';
  const upstreamCard = await (await fetch(new URL('.well-known/agent-card.json', upstreamUrl))).text();
  const waiting = new Map<string, (answer: unknown) => void>();
  // A task's event heard before its create's reply (a fast upstream): kept until the reply comes.
  const early = new Map<string, unknown>();
  nc.subscribe(subjects.completed, {
    callback: (error, msg) => {
      if (error) return;
      const { id, answer } = msg.json<StoredEvent>();
      const waiter = waiting.get(id);
      if (waiter) {
        waiting.delete(id);
        waiter(answer);
      } else early.set(id, answer);
    },
  });
  let card = '';
  const server = createServer((req, res) => {
    const reply = (status: number, body: string): void => {
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    };
    if (req.method === 'GET') return reply(200, card);
    void readBody(req).then(async (bytes) => {
      const call = JSON.parse(bytes.toString('utf8')) as { id?: unknown; params?: { message?: unknown } };
      try {
        const created = await nc.request(subjects.create, JSON.stringify({ message: call.params?.message }), { timeout: REQUEST_TIMEOUT_MS });
        const { id, error } = created.json<{ id?: string; error?: string }>();
        if (!id) throw new Error(error ?? 'no task');
        const answer = early.has(id) ? early.get(id) : await new Promise<unknown>((resolve) => waiting.set(id, resolve));
        early.delete(id);
        reply(200, JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, result: answer }));
      } catch (failure) {
        reply(200, JSON.stringify({ jsonrpc: '2.0', id: call.id ?? null, error: { code: -32603, message: (failure as Error).message } }));
      }
    });
  });
  server.keepAliveTimeout = 10 * 60 * 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  card = upstreamCard.split(upstreamUrl).join(`http://127.0.0.1:${port}/`);
  console.log(`ready ${port}`);
  return async () => {
    server.close();
    server.closeAllConnections();
  };
}

async function main(): Promise<void> {
  const role = process.env.BENCH_FLOOR_ROLE as HandoffFloorRole;
  if (!HANDOFF_FLOOR_ROLES.includes(role)) throw new Error(`BENCH_FLOOR_ROLE must be one of ${HANDOFF_FLOOR_ROLES.join(', ')}`);
  const subjects = floorSubjects(process.env.NATS_SUBJECT_PREFIX ?? 'bench');
  const nc = await connect({ servers: process.env.NATS_URL ?? 'nats://127.0.0.1:4222', name: `bench-floor-${role}` });
  const stop = await { tasks, notifier, edge }[role](nc, subjects);
  if (role !== 'edge') console.log('ready 0');
  const end = (): void => {
    void stop()
      .then(() => nc.drain())
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', end);
  process.on('SIGINT', end);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
