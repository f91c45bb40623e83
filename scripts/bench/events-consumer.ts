/**
 * What one consumer of the events library handles: publishes EVENTS_BENCH_EVENTS task events
 * (20 000 by default, 500 tasks) to a throwaway event stream on NATS_URL (loopback), then starts one
 * RelayEventConsumer from the beginning with a handler that does nothing, and prints the events per
 * second it handled and its CPU per event (process.cpuUsage over the consuming only), for the
 * default settings and for EVENTS_BENCH_CONCURRENCY. Deletes its stream after.
 *
 *   node --import ./test/support/process/register-ts.mjs scripts/bench/events-consumer.ts
 */
import 'reflect-metadata';
import { randomBytes, randomUUID } from 'node:crypto';
import {
  EVENT_CONSUMER_SUBJECTS,
  SUBJECTS_ADDRESSED_BY_NAME,
  type EnsureEventConsumerRequest,
  prefixedSubject,
  relayEventCloudEventHeaders,
  TASK_EVENT_POSITION_HEADER,
  taskEventSubject,
  TASK_EVENT_TYPES,
  type TaskEvent,
} from '@app/contracts';
import { RelayEventConsumer } from '@app/events-consumer';
import { deleteEventStream, ensureEventStream, eventStreamName, openJetStream, publishWithMsgId, type JetStreamContext } from '@app/messaging';
import { consumerConfigOf, consumerNameOf } from '../../apps/notifier/src/event-consumers/event-consumers.service';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const EVENTS = Number(process.env.EVENTS_BENCH_EVENTS ?? 20_000);
const TASKS = 500;
const QUIET = { info: () => undefined, warn: () => undefined };

function event(task: string, sequence: number): TaskEvent {
  const type = TASK_EVENT_TYPES[sequence % 4];
  return {
    schema_version: 1,
    event_id: randomUUID(),
    type,
    task_id: task,
    context_id: randomUUID(),
    sender: 'alice@acme',
    recipient: 'bob@acme',
    state: 'accepted',
    sequence_no: sequence,
    occurred_at: new Date().toISOString(),
    task: {
      intent: 'inform',
      summary: 'Please review the /users refactor.',
      message_count: sequence,
      latest_message: {
        id: `m-${sequence}`,
        sequence_no: sequence,
        from: 'bob@acme',
        body: 'lorem ipsum '.repeat(20),
        parts: [{ kind: 'text', text: 'lorem ipsum '.repeat(20) }],
      },
      result_summary: null,
      reason: null,
    },
  };
}

async function run(prefix: string, name: string, concurrency: number): Promise<void> {
  let handled = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  const consumer = await RelayEventConsumer.start(
    { url: NATS_URL, name, subjectPrefix: prefix, start: { from: 'beginning' }, concurrency, logger: QUIET },
    () => {
      if (++handled === EVENTS) done();
    },
  );
  await all;
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const used = process.cpuUsage(cpu);
  await consumer.stop();
  const cpuMs = (used.user + used.system) / 1000;
  console.log(
    `concurrency ${concurrency}: ${EVENTS} events in ${seconds.toFixed(2)} s = ${Math.round(EVENTS / seconds)} events/s; CPU ${cpuMs.toFixed(0)} ms = ${((cpuMs * 1000) / EVENTS).toFixed(1)} µs per event`,
  );
}

/**
 * Makes each consumer's durable consumer as the notifier does (its configuration from the notifier's
 * own `consumerConfigOf`), on this bench's connection: the bench runs no relay.
 */
function serveConsumerEnsure(jetStream: JetStreamContext, prefix: string): void {
  const pattern = prefixedSubject(prefix, SUBJECTS_ADDRESSED_BY_NAME[EVENT_CONSUMER_SUBJECTS.ensure]);
  jetStream.connection.subscribe(pattern, {
    callback: (error, message) => {
      if (error) return;
      void (async () => {
        const name = consumerNameOf(message.subject);
        const { data } = message.json<{ data: EnsureEventConsumerRequest }>();
        const stream = eventStreamName(prefix);
        if (data.reset) await jetStream.jsm.consumers.delete(stream, name).catch(() => undefined);
        const info = await jetStream.jsm.consumers.add(stream, consumerConfigOf(name, data, prefix));
        message.respond(
          JSON.stringify({
            response: { name, stream, created: true, num_pending: info.num_pending, delivered_stream_seq: info.delivered.stream_seq },
            isDisposed: true,
          }),
        );
      })().catch((failure: unknown) => message.respond(JSON.stringify({ err: { reason: 'internal_error', message: String(failure) }, isDisposed: true })));
    },
  });
}

async function main(): Promise<void> {
  const prefix = `bench_${randomBytes(4).toString('hex')}`;
  const jetStream = await openJetStream({ url: NATS_URL, name: 'events-consumer-bench' });
  try {
    await ensureEventStream(jetStream.jsm, prefix);
    const tasks = Array.from({ length: TASKS }, (_, index) => `01BENCH${String(index).padStart(19, '0')}`);
    const events = Array.from({ length: EVENTS }, (_, index) => event(tasks[index % TASKS], Math.floor(index / TASKS) + 1));
    for (let index = 0; index < events.length; index += 1000) {
      await Promise.all(
        events.slice(index, index + 1000).map((payload, offset) => {
          const subject = taskEventSubject(payload.type);
          return publishWithMsgId(jetStream.js, prefixedSubject(prefix, subject), payload, payload.event_id, 20000, null, {
            ...relayEventCloudEventHeaders(subject, payload, 'http://127.0.0.1:8080'),
            [TASK_EVENT_POSITION_HEADER]: String(index + offset + 1),
          });
        }),
      );
    }
    console.log(`published ${EVENTS} task events of ${TASKS} tasks (${Buffer.byteLength(JSON.stringify(events[0]))} bytes each)`);
    serveConsumerEnsure(jetStream, prefix);
    await run(prefix, 'bench_default', 16);
    await run(prefix, 'bench_wide', Number(process.env.EVENTS_BENCH_CONCURRENCY ?? 64));
  } finally {
    await deleteEventStream(jetStream.jsm, prefix).catch(() => undefined);
    await jetStream.connection.drain();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
