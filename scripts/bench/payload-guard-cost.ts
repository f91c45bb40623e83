/**
 * What a service spends holding one NATS payload to its contract: the `ContractGuardPipe` the
 * services run, beside a full class-validator pass (whitelist, transform) over the same contract
 * class, which is what they ran before values were validated once at the edge. Prints CPU µs per
 * payload for a send that creates a task and for a get, three rounds each.
 *
 *   npm run build && node dist/scripts/bench/payload-guard-cost.js
 */
import 'reflect-metadata';
import { ValidationPipe, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { GetRequest, SendRequest } from '@app/contracts';
import { ContractGuardPipe } from '@app/messaging';

const PAYLOADS_PER_ROUND = 20_000;
const ROUNDS = 3;

const caller = { id: '01JAGENTAAAAAAAAAAAAAAAAAA', handle: 'alice@acme', name: 'Alice', role: null };
const send = {
  caller,
  recipient: { ...caller, id: '01JAGENTBBBBBBBBBBBBBBBBBB', handle: 'bob@acme', name: 'Bob' },
  message: { message_id: 'm-1', parts: [{ kind: 'text', text: 'Is next_cursor null on the last page? '.repeat(8) }] },
  intent: 'ask_question',
  idempotency_key: 'key-1',
};
const get = { caller_id: caller.id, task_id: '01JTASKAAAAAAAAAAAAAAAAAAA', history_length: 20 };

const pipes: Record<string, PipeTransform> = {
  'class-validator': new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
  'contract guard': new ContractGuardPipe(),
};

async function cpuMicrosPerPayload(pipe: PipeTransform, payload: object, metatype: ArgumentMetadata['metatype']): Promise<number> {
  const metadata: ArgumentMetadata = { type: 'body', metatype };
  // A fresh copy per call, as each NATS message is decoded into one.
  const inputs = Array.from({ length: PAYLOADS_PER_ROUND }, () => structuredClone(payload));
  const started = process.cpuUsage();
  for (const input of inputs) await pipe.transform(input, metadata);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / PAYLOADS_PER_ROUND;
}

async function main(): Promise<void> {
  const cases = [
    { name: 'send (create)', payload: send, metatype: SendRequest },
    { name: 'get', payload: get, metatype: GetRequest },
  ];
  for (const pipe of Object.values(pipes)) {
    for (const { payload, metatype } of cases) await cpuMicrosPerPayload(pipe, payload, metatype);
  }
  for (const { name, payload, metatype } of cases) {
    for (const [label, pipe] of Object.entries(pipes)) {
      const rounds: number[] = [];
      for (let round = 0; round < ROUNDS; round += 1) rounds.push(await cpuMicrosPerPayload(pipe, payload, metatype));
      console.log(`${name.padEnd(14)} ${label.padEnd(16)} ${rounds.map((micros) => `${micros.toFixed(2)} µs`).join('  ')} CPU per payload`);
    }
  }
}

void main();
