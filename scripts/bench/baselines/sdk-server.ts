/**
 * The official A2A server: `@a2a-js/sdk`'s `DefaultRequestHandler` behind its express JSON-RPC
 * handler, with an AgentExecutor that records the submitted Task and finishes. The task store is
 * `DatabaseTaskStore` on Postgres (kysely + pg's PostgresDialect; its migrations were run into the
 * bench database by the bench) or `InMemoryTaskStore`.
 *
 *   BENCH_PORT=… BENCH_SDK_STORE=postgres|memory DATABASE_URL=… node dist/scripts/bench/baselines/sdk-server.js
 */
import { A2A_PROTOCOL_VERSION, TaskState, type AgentCard, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
  type TaskStore,
} from '@a2a-js/sdk/server';
import { DatabaseTaskStore } from '@a2a-js/sdk/server/database';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';

const PORT = Number(process.env.BENCH_PORT ?? 18092);
const STORE = process.env.BENCH_SDK_STORE === 'memory' ? 'memory' : 'postgres';

/** The little of express this server uses (express ships no types and @types/express is not installed). */
interface ExpressApp {
  use(handler: unknown): void;
  listen(port: number, host: string, callback: () => void): { keepAliveTimeout: number; close(): void; closeAllConnections(): void };
}

const card: AgentCard = {
  name: 'bench-sdk',
  description: 'The official @a2a-js/sdk server as a benchmark baseline',
  supportedInterfaces: [{ url: `http://127.0.0.1:${PORT}/`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
  provider: { organization: 'AgentRelay bench', url: 'http://127.0.0.1/' },
  version: '1.0.0',
  capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
  skills: [],
  documentationUrl: '',
  signatures: [],
};

/** Records the submitted task and finishes: the request handler saves it to the store before it answers. */
class RecordingExecutor implements AgentExecutor {
  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const task: Task = context.task ?? {
      id: context.taskId,
      contextId: context.contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [context.userMessage],
      metadata: context.userMessage.metadata,
    };
    bus.publish(AgentEvent.task(task));
    bus.finished();
  };

  cancelTask = async (): Promise<void> => undefined;
}

async function main(): Promise<void> {
  let db: Kysely<unknown> | undefined;
  let store: TaskStore;
  if (STORE === 'postgres') {
    db = new Kysely<unknown>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, application_name: 'bench-sdk-postgres' }) }),
    });
    store = new DatabaseTaskStore(db);
  } else {
    store = new InMemoryTaskStore();
  }
  const requestHandler = new DefaultRequestHandler(card, store, new RecordingExecutor());
  const expressModule = 'express';
  const { default: express } = (await import(expressModule)) as { default: () => ExpressApp };
  const app = express();
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  const server = app.listen(PORT, '127.0.0.1', () => console.log(`ready ${PORT}`));
  server.keepAliveTimeout = 10 * 60 * 1000;
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    void (db ? db.destroy() : Promise.resolve()).finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
