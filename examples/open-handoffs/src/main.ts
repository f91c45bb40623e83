/**
 * An example consumer of the relay's task events: a table of the open handoffs of every agent,
 * started from a snapshot of the open tasks (the admin API) and kept current from the event stream
 * with the events consumer library, served as JSON on `GET /open-handoffs`.
 *
 *   NATS_URL=nats://127.0.0.1:4222 NATS_NKEY_SEED_FILE=docker/nats/credentials/consumer-open_handoffs.nk \
 *   RELAY_URL=http://127.0.0.1:8080 RELAY_ADMIN_TOKEN=… \
 *   node --import ./test/support/process/register-ts.mjs examples/open-handoffs/src/main.ts
 *
 * (make its NATS credential with `npm run nats:credentials -- --consumer open_handoffs`).
 */
import { createServer } from 'node:http';
import { adminOpenTasks, RelayEventConsumer } from '@app/events-consumer';
import type { AdminTaskRow, TaskEvent } from '@app/contracts';
import { OpenHandoffsTable } from './open-handoffs';

function setting(name: string, fallback?: string): string {
  const value = process.env[name] || fallback;
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
}

async function main(): Promise<void> {
  const table = new OpenHandoffsTable();
  const consumer = await RelayEventConsumer.startFromSnapshot<TaskEvent, AdminTaskRow>(
    {
      url: setting('NATS_URL', 'nats://127.0.0.1:4222'),
      name: setting('CONSUMER_NAME', 'open_handoffs'),
      subjectPrefix: setting('NATS_SUBJECT_PREFIX', ''),
      credentials: process.env.NATS_NKEY_SEED_FILE ? { nkeySeedFile: process.env.NATS_NKEY_SEED_FILE } : undefined,
    },
    {
      read: () =>
        adminOpenTasks({
          relayUrl: setting('RELAY_URL', 'http://127.0.0.1:8080'),
          adminToken: setting('RELAY_ADMIN_TOKEN'),
          pageSize: Number(setting('SNAPSHOT_PAGE_SIZE', '200')),
        }),
      onSnapshotTask: (row) => table.fromSnapshot(row),
    },
    (event) => table.apply(event.data),
  );
  const server = createServer((request, response) => {
    if (request.method === 'GET' && request.url === '/open-handoffs') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(table));
    } else if (request.method === 'GET' && request.url === '/stats') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...consumer.stats, snapshot: consumer.snapshot }));
    } else {
      response.writeHead(404).end();
    }
  });
  server.listen(Number(setting('PORT', '8090')), setting('HOST', '127.0.0.1'), () => {
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    console.log(
      `open-handoffs listening on http://127.0.0.1:${port} (snapshot of ${consumer.snapshot?.tasks} open tasks at stream sequence ${consumer.snapshot?.streamSequence})`,
    );
  });
  const stop = async (): Promise<void> => {
    server.close();
    await consumer.stop();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
