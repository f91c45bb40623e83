/**
 * The upstream A2A agents of the official `@a2a-js/sdk` server for the `upstream*` scenarios, three
 * in one process, each with its card at `<base>/.well-known/agent-card.json`, a
 * `DefaultRequestHandler` behind the express JSON-RPC handler and an `InMemoryTaskStore`:
 *
 * - `/` (`upstream`): an AgentExecutor that answers every new task at once: working, an artifact
 *   with the text upper-cased, then completed with the message "echo: <text>". Its card declares no
 *   streaming and no push notifications, so the relay follows its tasks with `GetTask`.
 * - `/stream/` (`upstream-stream`): the same executor; its card declares streaming, so the relay
 *   sends `SendStreamingMessage` and reads the task's updates from the stream the SDK serves.
 * - `/push/` (`upstream-push`): its card declares push notifications (no streaming); its executor
 *   answers working at once and completes the task PUSH_HOLD_MS later, and it pushes the final task
 *   (only that: a notification per event would reach the relay before it recorded the task) to the
 *   push config the relay's `SendMessage` gave it, retrying a push the receiver refuses.
 *
 * It listens on a free loopback port (or BENCH_PORT) and prints `ready <port>` once it does.
 *
 *   node dist/scripts/bench/baselines/upstream-agent.js
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, StreamResponse, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type PushNotificationSender,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

/** The little of express this server uses (express ships no types and @types/express is not installed). */
interface ExpressApp extends RequestListener {
  use(path: string, handler: unknown): void;
}

function textOf(message: Message): string {
  const part = message.parts.find((entry) => entry.content?.$case === 'text');
  return part?.content?.$case === 'text' ? part.content.value : '';
}

function textParts(text: string): Message['parts'] {
  return [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }];
}

/** How long the push agent works on a task before it completes it (the relay has seen it working by then). */
const PUSH_HOLD_MS = 100;
/** A push the receiver refuses (it may not have recorded the task yet) is sent again, this many times at most, this far apart. */
const PUSH_RETRIES = 5;
const PUSH_RETRY_MS = 100;

const TERMINAL_STATES: ReadonlySet<TaskState> = new Set([
  TaskState.TASK_STATE_COMPLETED,
  TaskState.TASK_STATE_FAILED,
  TaskState.TASK_STATE_CANCELED,
  TaskState.TASK_STATE_REJECTED,
]);

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Answers each new task: working, an artifact, completed with "echo: <text>"; at once, or after `holdMs` at work. */
class EchoExecutor implements AgentExecutor {
  constructor(private readonly holdMs = 0) {}

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    const task: Task = context.task ?? {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [userMessage],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    const text = textOf(userMessage);
    const status = (state: TaskState, message?: Message) =>
      AgentEvent.statusUpdate({ taskId, contextId, status: { state, timestamp: new Date().toISOString(), message }, metadata: undefined });
    bus.publish(status(TaskState.TASK_STATE_WORKING));
    if (this.holdMs > 0) await sleep(this.holdMs);
    bus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: 'echo-result',
          name: 'echo.txt',
          description: 'What was sent, upper-cased',
          parts: textParts(text.toUpperCase()),
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    const answer: Message = {
      messageId: `${taskId}-answer`,
      contextId,
      taskId,
      role: Role.ROLE_AGENT,
      parts: textParts(`echo: ${text}`),
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(status(TaskState.TASK_STATE_COMPLETED, answer));
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: '',
        status: { state: TaskState.TASK_STATE_CANCELED, timestamp: new Date().toISOString(), message: undefined },
        metadata: undefined,
      }),
    );
    bus.finished();
  };
}

/** Pushes a task once it ended, the whole task as a v1.0 `StreamResponse`, to each push config it was given, with the config's credentials. */
class FinalTaskPushSender implements PushNotificationSender {
  constructor(private readonly store: InMemoryPushNotificationStore) {}

  async send(event: StreamResponse, context: Parameters<PushNotificationSender['send']>[1], task?: Task): Promise<void> {
    const state = task?.status?.state;
    if (!task || state === undefined || !TERMINAL_STATES.has(state)) return;
    const body = JSON.stringify(StreamResponse.toJSON({ payload: { $case: 'task', value: task } }));
    for (const config of await this.store.load(task.id, context)) {
      const authorization = config.authentication ? `${config.authentication.scheme} ${config.authentication.credentials}` : undefined;
      for (let attempt = 0; attempt <= PUSH_RETRIES; attempt++) {
        const response = await fetch(config.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(authorization ? { authorization } : {}),
            ...(config.token ? { 'x-a2a-notification-token': config.token } : {}),
          },
          body,
        }).catch(() => null);
        await response?.body?.cancel().catch(() => undefined);
        if (response?.ok) break;
        await sleep(PUSH_RETRY_MS);
      }
    }
  }
}

type Mode = 'poll' | 'stream' | 'push';

function cardOf(url: string, mode: Mode): AgentCard {
  return {
    name: `bench-upstream-${mode}`,
    description: 'An upstream A2A agent of the official @a2a-js/sdk server that echoes what it is sent',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: { organization: 'AgentRelay bench', url: 'http://127.0.0.1/' },
    version: '1.0.0',
    capabilities: { streaming: mode === 'stream', pushNotifications: mode === 'push', extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    documentationUrl: '',
    signatures: [],
  };
}

async function main(): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(Number(process.env.BENCH_PORT ?? 0), '127.0.0.1', resolve));
  server.keepAliveTimeout = 10 * 60 * 1000;
  const port = (server.address() as AddressInfo).port;
  const expressModule = 'express';
  const { default: express } = (await import(expressModule)) as { default: () => ExpressApp };
  const app = express();
  // The more specific bases first: the root's handler would take their requests otherwise.
  for (const [mode, base] of [
    ['stream', '/stream/'],
    ['push', '/push/'],
    ['poll', '/'],
  ] as const) {
    const card = cardOf(`http://127.0.0.1:${port}${base}`, mode);
    const pushStore = new InMemoryPushNotificationStore();
    const requestHandler =
      mode === 'push'
        ? new DefaultRequestHandler(
            card,
            new InMemoryTaskStore(),
            new EchoExecutor(PUSH_HOLD_MS),
            new DefaultExecutionEventBusManager(),
            pushStore,
            new FinalTaskPushSender(pushStore),
          )
        : new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
    app.use(`${base}${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
    app.use(base === '/' ? '/' : base.slice(0, -1), jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  }
  server.on('request', app);
  console.log(`ready ${port}`);
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
