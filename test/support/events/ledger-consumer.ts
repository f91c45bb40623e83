/**
 * A consumer process for the consumer library's e2e test: it records every task event it handles
 * in a table of its own (the event id unique), and a second time in `<table>_again` when an event
 * reaches the handler although it was recorded already. Run with
 * `node --import ./test/support/process/register-ts.mjs test/support/events/ledger-consumer.ts`.
 */
import pg from 'pg';
import { RelayEventConsumer } from '@app/events-consumer';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

async function main(): Promise<void> {
  const table = env('LEDGER_TABLE');
  const db = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 8 });
  const consumer = await RelayEventConsumer.start(
    {
      url: env('NATS_URL'),
      name: env('CONSUMER_NAME'),
      credentials: { nkeySeedFile: env('NATS_NKEY_SEED_FILE') },
      start: { from: 'beginning' },
      // A loaded machine can take longer than nats.js's 20 s for the handshake.
      connectOptions: { timeout: 60_000 },
      concurrency: 32,
      maxPending: 500,
      isHandled: async (id) => (await db.query(`SELECT 1 FROM ${table} WHERE event_id = $1`, [id])).rowCount === 1,
      logger: { info: (message) => console.log(message), warn: (message, fields) => console.log(message, JSON.stringify(fields ?? {})) },
    },
    async (event) => {
      const inserted = await db.query(
        `INSERT INTO ${table} (event_id, task_id, sequence_no, stream_seq) VALUES ($1, $2, $3, $4) ON CONFLICT (event_id) DO NOTHING`,
        [event.id, event.subject, event.data.sequence_no, event.streamSequence],
      );
      if (inserted.rowCount === 0) await db.query(`INSERT INTO ${table}_again (event_id) VALUES ($1)`, [event.id]);
    },
  );
  console.log('ledger consumer ready');
  const stop = async (): Promise<void> => {
    await consumer.stop();
    const cpu = process.cpuUsage();
    console.log(`ledger consumer stopped ${JSON.stringify({ ...consumer.stats, cpu_user_us: cpu.user, cpu_system_us: cpu.system })}`);
    await db.end();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
