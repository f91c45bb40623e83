/**
 * An upstream A2A agent of the official `@a2a-js/sdk` server for the `upstream` scenario: its card
 * at `/.well-known/agent-card.json`, `DefaultRequestHandler` behind the express JSON-RPC handler,
 * `InMemoryTaskStore`, and an AgentExecutor that answers every new task at once: working, an
 * artifact with the text upper-cased, then completed with the message "echo: <text>". The card
 * declares no streaming and no push notifications, so the relay follows its tasks with `GetTask`.
 * It listens on a free loopback port (or BENCH_PORT) and prints `ready <port>` once it does.
 *
 *   node dist/scripts/bench/baselines/upstream-agent.js
 */
import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
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

/** Answers each new task at once: working, an artifact, completed with "echo: <text>". */
class EchoExecutor implements AgentExecutor {
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

function cardOf(url: string): AgentCard {
  return {
    name: 'bench-upstream',
    description: 'An upstream A2A agent of the official @a2a-js/sdk server that echoes what it is sent',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: { organization: 'AgentRelay bench', url: 'http://127.0.0.1/' },
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
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
  const requestHandler = new DefaultRequestHandler(cardOf(`http://127.0.0.1:${port}/`), new InMemoryTaskStore(), new EchoExecutor());
  const expressModule = 'express';
  const { default: express } = (await import(expressModule)) as { default: () => ExpressApp };
  const app = express();
  app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
  app.use('/', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
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
