/**
 * The servers of the RPC layer benchmark (`rpc-layer-cost.ts`): one trivial request-reply handler,
 * a GetTask-like lookup answering a ~1 KB task, behind one of four ways of serving NATS requests.
 * The benchmark starts each in a child process of its own (`rpc-layer-cost.js --serve <server> <prefix>`).
 */
import 'reflect-metadata';
import { Controller, type DynamicModule, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload, ServerNats } from '@nestjs/microservices';
import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import {
  GetRequest,
  prefixedSubject,
  RelayError,
  SERVICE_QUEUE_GROUPS,
  TASKS_SUBJECTS,
  type RelayErrorBody,
  type RpcReply,
  type RpcRequest,
  type RpcSubject,
  type TaskView,
} from '@app/contracts';
import { createRootLogger, PinoNestLogger } from '@app/logging';
import { ContractGuardPipe, natsConnectOptions, RelayNatsServer, RelayRpcExceptionFilter, RequestIdInterceptor, ServiceLoad } from '@app/messaging';
import { createMetricsRegistry, NatsHandlerMetrics } from '@app/metrics';

export const RPC_SERVERS = ['nest-relay', 'nest-relay-unvalidated', 'nest-plain', 'nats-map'] as const;
export type RpcServerName = (typeof RPC_SERVERS)[number];

/** The task id the handler does not know: its answer is a RelayError, to compare the error replies. */
export const MISSING_TASK_ID = 'missing-task';

const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const QUEUE = SERVICE_QUEUE_GROUPS.tasks;

type TaskLookup = RpcRequest<typeof TASKS_SUBJECTS.get>;

const PARTICIPANT_TIMESTAMP = '2026-01-01T00:00:00.000Z';

/** A task as `tasks/get` answers it: two participants, one message, about 1 KB of JSON. */
async function getTask(request: TaskLookup): Promise<TaskView> {
  await Promise.resolve();
  if (request.task_id === MISSING_TASK_ID) throw new RelayError('thread_not_found', `No task ${request.task_id} for this agent`, { task_id: request.task_id });
  return {
    id: request.task_id,
    context_id: `ctx-${request.task_id}`,
    state: 'pending',
    intent: 'ask_question',
    summary: 'Review the retry policy of the webhook notifier and propose a smaller backoff',
    sender: { id: request.caller_id, handle: 'planner', name: 'Planner agent', role: 'planning' },
    recipient: { id: 'agt_01J9ZRECIPIENT0000000000', handle: 'reviewer', name: 'Reviewer agent', role: 'review' },
    proposed_action: null,
    artifacts: [],
    messages: [
      {
        id: 'msg_01J9ZMESSAGE00000000000000',
        sequence_no: 1,
        from: request.caller_id,
        author: 'sender',
        body: 'The notifier retries every failed delivery with a fixed 30 s delay; please look at whether an exponential backoff starting at 2 s would drain the queue faster after an outage.',
        parts: [{ kind: 'text', text: 'See deliveries of the last week for the outage pattern.' }],
        payload: {},
        created_at: PARTICIPANT_TIMESTAMP,
      },
    ],
    message_count: 1,
    unread_messages: 0,
    result_summary: null,
    reason: null,
    metadata: { priority: 'normal' },
    accepted_at: null,
    completed_at: null,
    cancelled_at: null,
    failed_at: null,
    rejected_at: null,
    created_at: PARTICIPANT_TIMESTAMP,
    updated_at: PARTICIPANT_TIMESTAMP,
    status_timestamp: PARTICIPANT_TIMESTAMP,
    hold: null,
    tool_prompts: null,
    chain: { parent_task_id: null, root_task_id: request.task_id, depth: 0 },
  };
}

/** The handler as a Nest controller on `pattern`, its payload either the contract class (held to its shape by the pipe) or a plain type (passed through). */
function tasksController(pattern: string, validated: boolean): DynamicModule {
  @Controller()
  class ValidatedTasksController {
    @MessagePattern(pattern)
    get(@Payload() request: GetRequest): Promise<TaskView> {
      return getTask(request);
    }
  }
  @Controller()
  class PlainTasksController {
    @MessagePattern(pattern)
    get(@Payload() request: TaskLookup): Promise<TaskView> {
      return getTask(request);
    }
  }
  class RpcBenchModule {}
  return { module: RpcBenchModule, controllers: [validated ? ValidatedTasksController : PlainTasksController] };
}

function serviceLogger(): PinoNestLogger {
  return new PinoNestLogger(createRootLogger('tasks', process.env.LOG_LEVEL ?? 'info'));
}

/** (a) The relay's stack, started as `startRelayMicroservice` starts a service (without its JetStream set-up, tracing off). */
async function startRelayStack(prefix: string, validated: boolean): Promise<INestMicroservice> {
  const logger = serviceLogger();
  const app = await NestFactory.createMicroservice(tasksController(TASKS_SUBJECTS.get, validated), {
    strategy: new RelayNatsServer(
      prefix,
      { ...natsConnectOptions(NATS_URL), queue: QUEUE, name: 'rpc-bench-nest-relay', maxReconnectAttempts: -1, noAsyncTraces: true },
      undefined,
      new ServiceLoad(),
    ),
    logger,
    bufferLogs: true,
  });
  app.useGlobalPipes(new ContractGuardPipe());
  app.useGlobalFilters(new RelayRpcExceptionFilter('tasks'));
  app.useGlobalInterceptors(new RequestIdInterceptor(logger.forContext('Rpc'), new NatsHandlerMetrics(createMetricsRegistry(), prefix)));
  await app.listen();
  return app;
}

/** (b) Nest's own NATS transport: no prefix support (the pattern carries it), no pipe, filter or interceptor. */
async function startPlainNest(prefix: string): Promise<INestMicroservice> {
  const app = await NestFactory.createMicroservice(tasksController(prefixedSubject(prefix, TASKS_SUBJECTS.get), false), {
    strategy: new ServerNats({ ...natsConnectOptions(NATS_URL), queue: QUEUE, name: 'rpc-bench-nest-plain', maxReconnectAttempts: -1, noAsyncTraces: true }),
    logger: serviceLogger(),
    bufferLogs: true,
  });
  await app.listen();
  return app;
}

/** Every handler of a service, typed from the contracts' RPC map. */
type RpcHandlers = { [S in RpcSubject]?: (request: RpcRequest<S>) => Promise<RpcReply<S>> };

/** The reply the relay's exception filter gives: a RelayError's own body, anything else an `internal_error` naming a logged id. */
function errorBody(error: unknown): RelayErrorBody {
  if (error instanceof RelayError) return error.toBody();
  const errorId = randomUUID();
  console.error({ err: error, error_id: errorId }, 'unhandled error in message handler');
  return { reason: 'internal_error', message: `Internal error (id ${errorId})`, data: { error_id: errorId } };
}

/** One request: Nest's packet in (`{pattern, data, id}`), Nest's reply packet out, so the edge's NatsRpcClient reads it unchanged. */
async function answer(message: Msg, handler: (request: never) => Promise<unknown>): Promise<void> {
  const packet = message.json<{ id?: string; data: never }>();
  let reply: { id?: string; response?: unknown; err?: RelayErrorBody; isDisposed: true };
  try {
    reply = { id: packet.id, response: await handler(packet.data), isDisposed: true };
  } catch (error) {
    reply = { id: packet.id, err: errorBody(error), isDisposed: true };
  }
  if (message.reply) message.respond(JSON.stringify(reply));
}

/** (c) A typed handler map straight on nats.js. */
async function startHandlerMap(prefix: string): Promise<NatsConnection> {
  const handlers: RpcHandlers = { [TASKS_SUBJECTS.get]: getTask };
  const connection = await connect({ ...natsConnectOptions(NATS_URL), name: 'rpc-bench-nats-map', maxReconnectAttempts: -1, noAsyncTraces: true });
  for (const [subject, handler] of Object.entries(handlers)) {
    connection.subscribe(prefixedSubject(prefix, subject), {
      queue: QUEUE,
      callback: (error, message) => {
        if (error) console.error(error);
        else void answer(message, handler as (request: never) => Promise<unknown>);
      },
    });
  }
  await connection.flush();
  return connection;
}

/** Serves until SIGTERM, then closes the server (letting in-flight requests answer) and exits. */
export async function serveRpcBench(server: RpcServerName, prefix: string): Promise<void> {
  if (!RPC_SERVERS.includes(server) || !prefix) throw new Error(`usage: --serve <${RPC_SERVERS.join('|')}> <subject prefix>`);
  let close: () => Promise<void>;
  if (server === 'nats-map') {
    const connection = await startHandlerMap(prefix);
    close = () => connection.drain();
  } else {
    const app = server === 'nest-plain' ? await startPlainNest(prefix) : await startRelayStack(prefix, server === 'nest-relay');
    close = () => app.close();
  }
  process.once('SIGTERM', () => void close().finally(() => process.exit(0)));
}
