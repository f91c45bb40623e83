import type { AddressInfo } from 'node:net';
import type { RequestListener, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { A2A_PROTOCOL_VERSION, Role, StreamResponse, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultExecutionEventBusManager,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  type PushNotificationSender,
  type AgentExecutionEvent,
  InMemoryTaskStore,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

/** The little of express these servers use (express ships no types and @types/express is not installed). */
interface ExpressRequest {
  headers: Record<string, string | string[] | undefined>;
  path: string;
  method: string;
}
interface ExpressResponse {
  status(code: number): ExpressResponse;
  json(body: unknown): void;
  end: (...args: unknown[]) => unknown;
}
type Next = () => void;
interface ExpressApp {
  use(handler: unknown): void;
  get(path: string, handler: (request: ExpressRequest, response: ExpressResponse) => void): void;
  listen(port: number, host: string, callback: () => void): Server;
}

export interface UpstreamAgentOptions {
  binding: 'JSONRPC' | 'HTTP+JSON';
  /** The shape of the card it serves: v1.0 (`supportedInterfaces`) or v0.3 (`url`, `preferredTransport`). */
  card: '1.0' | '0.3';
  /** A header the server requires on every A2A call, and its value (`Authorization` for a bearer token). */
  requireHeader?: { name: string; value: string };
  /** Checks the `Authorization` header of every A2A call (an OAuth2 access token); 401 when it answers false. */
  verifyAuthorization?: (authorization: string | undefined) => Promise<boolean>;
  /** Checks every A2A call (its method, path and headers) after the credential; 401 when it answers false. */
  verifyRequest?: (request: SeenCall) => Promise<boolean>;
  /** Its card offers OAuth2 client credentials at this token URL. */
  oauth2TokenUrl?: string;
  /** A loopback port to listen on (0: any). */
  port?: number;
  /**
   * What it does with a new task: `echo` answers at once; `ask` asks a question (input-required)
   * and answers the sender's reply; `wait` works on it until it is canceled; `gated` reports a first
   * step (a message and the first chunk of an artifact), waits for `openGate()`, then sends the
   * last chunk and the answer.
   */
  behaviour?: 'echo' | 'ask' | 'wait' | 'gated';
  /** Its card declares streaming (`SendStreamingMessage`, `SubscribeToTask`). */
  streaming?: boolean;
  /** Its card declares push notifications: it posts each event of a task to the push configs it was given. */
  pushNotifications?: boolean;
  /** Holds back its answer to the first A2A request this long (it has done the work; only the answer is late). */
  delayFirstAnswerMs?: number;
  /** Serves https with this certificate and requires a client certificate issued by `ca` (mTLS) on every request, the card's included. */
  tls?: { cert: string; key: string; ca: string };
  /** Holds back its answers to every A2A request after the first (the first is answered at once) until this resolves. */
  holdLaterAnswers?: Promise<void>;
  /**
   * How it sends its answer to the `post`-th A2A POST (1: the first): `drip` sends the headers at
   * once, then one space at a time for ever; `padBytes` sends the JSON-RPC answer with a string of
   * that many bytes in the result's metadata, streamed as the socket takes it; undefined: as usual.
   */
  shapeAnswer?: (post: number) => 'drip' | { padBytes: number } | undefined;
  /** Its final status message carries a `data` part with this content beside its text. */
  answerData?: unknown;
  /** Its final status message carries these text parts instead of its one text. */
  answerTexts?: string[];
}

/** What an upstream server's shaped answers and card did on the wire. */
export interface WireStats {
  /** Answers (and cards) dripping now, and those whose connection the client closed. */
  dripping: number;
  dripsClosed: number;
  /** Bytes of padded answers written to their sockets so far. */
  paddedBytesSent: number;
  /** Padded answers the client read to their end. */
  paddedAnswersCompleted: number;
}

/** One push notification the server sent, and what the receiver answered. */
export interface SentPush {
  url: string;
  authorization: string | undefined;
  event: string;
  status: number;
}

/** What an upstream server saw of one A2A call. */
export interface SeenCall {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A real A2A server of the official SDK, as the recipient of handoffs: answers "echo: <text>" with an artifact, then completes. */
export interface UpstreamAgent {
  url: string;
  cardUrl: string;
  port: number;
  /** The user messages of the tasks it created, one per new task. */
  tasksCreated: Message[];
  /** Every user message it was sent, new task or not, in order. */
  received: Message[];
  /** Each of its tasks as last stored, by id. */
  tasks: Map<string, Task>;
  calls: SeenCall[];
  /** The push notifications it sent, in order. */
  pushes: SentPush[];
  /** Resolves when a `gated` task waits at its gate. */
  atGate: Promise<void>;
  openGate(): void;
  /** Stops listening and drops every connection (its tasks and their executions go on in memory). */
  kill(): Promise<void>;
  /** Listens again on the same port, with the same tasks. */
  revive(): Promise<void>;
  /** Serves its card with these fields replaced from now on (the server itself stays as it is). */
  setCard(fields: Record<string, unknown>): void;
  /** From now on its card is sent as its answers are with `drip`: the headers, then a space at a time. */
  dripCard(): void;
  wire: WireStats;
  close(): Promise<void>;
}

function textOf(message: Message): string {
  const part = message.parts.find((entry) => entry.content?.$case === 'text');
  return part?.content?.$case === 'text' ? part.content.value : '';
}

function textMessage(messageId: string, taskId: string, contextId: string, text: string): Message {
  return {
    messageId,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function status(taskId: string, contextId: string, state: TaskState, message?: Message): AgentExecutionEvent {
  return AgentEvent.statusUpdate({ taskId, contextId, status: { state, timestamp: new Date().toISOString(), message }, metadata: undefined });
}

function textArtifact(
  taskId: string,
  contextId: string,
  artifactId: string,
  name: string,
  text: string,
  chunk: { append: boolean; lastChunk: boolean } = { append: false, lastChunk: true },
): AgentExecutionEvent {
  return AgentEvent.artifactUpdate({
    taskId,
    contextId,
    artifact: {
      artifactId,
      name,
      description: 'What was sent, upper-cased',
      parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
      metadata: undefined,
      extensions: [],
    },
    ...chunk,
    metadata: undefined,
  });
}

class EchoExecutor implements AgentExecutor {
  constructor(
    private readonly behaviour: NonNullable<UpstreamAgentOptions['behaviour']>,
    private readonly created: Message[],
    private readonly received: Message[],
    private readonly gate: { reached: () => void; opened: Promise<void> },
    private readonly shape: { data?: unknown; texts?: string[] } = {},
  ) {}

  execute = async (context: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage } = context;
    this.received.push(userMessage);
    if (!context.task) {
      this.created.push(userMessage);
      const task: Task = {
        id: taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
        artifacts: [],
        history: [userMessage],
        metadata: undefined,
      };
      bus.publish(AgentEvent.task(task));
    } else {
      bus.publish(AgentEvent.task(context.task));
    }
    const text = textOf(userMessage);
    if (this.behaviour === 'ask' && !context.task) {
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_INPUT_REQUIRED, textMessage(`${taskId}-question`, taskId, contextId, 'Which colour?')));
      bus.finished();
      return;
    }
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING));
    if (this.behaviour === 'wait') {
      // Works on it until canceled (the SDK's handler cancels a task whose executor has returned).
      bus.finished();
      return;
    }
    if (this.behaviour === 'gated') {
      bus.publish(status(taskId, contextId, TaskState.TASK_STATE_WORKING, textMessage(`${taskId}-step`, taskId, contextId, 'step 1 done')));
      bus.publish(textArtifact(taskId, contextId, 'log', 'log.txt', 'part 1;', { append: false, lastChunk: false }));
      this.gate.reached();
      await this.gate.opened;
      bus.publish(textArtifact(taskId, contextId, 'log', 'log.txt', 'part 2', { append: true, lastChunk: true }));
    }
    bus.publish(textArtifact(taskId, contextId, 'echo-result', 'echo.txt', text.toUpperCase()));
    const answer = textMessage(`${taskId}-answer`, taskId, contextId, `echo: ${text}`);
    if (this.shape.texts) answer.parts = this.shape.texts.map((value) => ({ ...answer.parts[0], content: { $case: 'text', value } }));
    if (this.shape.data !== undefined)
      answer.parts.push({ content: { $case: 'data', value: this.shape.data as { [key: string]: unknown } }, metadata: undefined, filename: '', mediaType: '' });
    bus.publish(status(taskId, contextId, TaskState.TASK_STATE_COMPLETED, answer));
    bus.finished();
  };

  cancelTask = async (taskId: string, bus: ExecutionEventBus): Promise<void> => {
    bus.publish(status(taskId, '', TaskState.TASK_STATE_CANCELED));
    bus.finished();
  };
}

/** Posts each event of a task (v1.0 `StreamResponse` JSON) to its push configs, and keeps what the receivers answered. */
class RecordingPushSender implements PushNotificationSender {
  constructor(
    private readonly store: InMemoryPushNotificationStore,
    private readonly sent: SentPush[],
  ) {}

  async send(event: StreamResponse, context: Parameters<PushNotificationSender['send']>[1]): Promise<void> {
    const payload = event.payload;
    const taskId = payload?.$case === 'task' ? payload.value.id : (payload?.value.taskId ?? '');
    if (!taskId) return;
    for (const config of await this.store.load(taskId, context)) {
      const authorization = config.authentication ? `${config.authentication.scheme} ${config.authentication.credentials}` : undefined;
      const response = await fetch(config.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...(authorization ? { authorization } : {}),
          ...(config.token ? { 'x-a2a-notification-token': config.token } : {}),
        },
        body: JSON.stringify(StreamResponse.toJSON(event)),
      }).catch(() => null);
      await response?.body?.cancel().catch(() => undefined);
      this.sent.push({ url: config.url, authorization, event: payload?.$case ?? 'none', status: response?.status ?? 0 });
    }
  }
}

/** An in-memory task store that also keeps each task as last saved, for the tests to read. */
class RecordingTaskStore extends InMemoryTaskStore {
  readonly seen = new Map<string, Task>();

  override async save(task: Task, context: Parameters<InMemoryTaskStore['save']>[1]): Promise<void> {
    this.seen.set(task.id, structuredClone(task));
    await super.save(task, context);
  }
}

function sdkCard(url: string, binding: UpstreamAgentOptions['binding'], streaming: boolean, pushNotifications: boolean): AgentCard {
  return {
    name: 'Echo upstream',
    description: 'An A2A server of the official SDK that echoes what it is sent',
    supportedInterfaces: [
      { url, protocolBinding: binding, tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
      { url, protocolBinding: binding, tenant: '', protocolVersion: '0.3' },
    ],
    provider: { organization: 'AgentRelay tests', url: 'http://127.0.0.1/' },
    version: '1.0.0',
    capabilities: { streaming, pushNotifications, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes', tags: ['echo'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    documentationUrl: '',
    signatures: [],
  };
}

/** The card as JSON on the wire: v1.0 as the SDK's own card, or the v0.3 shape of the same agent. */
function servedCard(options: UpstreamAgentOptions, url: string, card: AgentCard): unknown {
  const apiKey = options.requireHeader && options.requireHeader.name.toLowerCase() !== 'authorization' ? options.requireHeader.name : null;
  const tokenUrl = options.oauth2TokenUrl;
  if (options.card === '1.0') {
    return {
      ...card,
      supportedInterfaces: card.supportedInterfaces.filter((entry) => entry.protocolVersion !== '0.3'),
      ...(apiKey ? { securitySchemes: { key: { apiKeySecurityScheme: { location: 'header', name: apiKey, description: '' } } } } : {}),
      ...(tokenUrl ? { securitySchemes: { machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl, scopes: {} } } } } } } : {}),
    };
  }
  return {
    name: card.name,
    description: card.description,
    protocolVersion: '0.3.0',
    version: '1.0.0',
    url,
    preferredTransport: options.binding,
    capabilities: { streaming: options.streaming === true, pushNotifications: options.pushNotifications === true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'echo', description: 'Echoes', tags: ['echo'] }],
    ...(apiKey ? { securitySchemes: { key: { type: 'apiKey', in: 'header', name: apiKey } } } : {}),
    ...(tokenUrl ? { securitySchemes: { machines: { type: 'oauth2', flows: { clientCredentials: { tokenUrl, scopes: {} } } } } } : {}),
  };
}

/** Sends the headers of a JSON answer at once, then a space every 200 ms until the client goes. */
function drip(response: ServerResponse, wire: WireStats): void {
  response.removeHeader('content-length');
  response.writeHead(200, { 'content-type': 'application/json' });
  response.write(' ');
  wire.dripping += 1;
  const timer = setInterval(() => response.write(' '), 200);
  response.on('close', () => {
    clearInterval(timer);
    wire.dripping -= 1;
    wire.dripsClosed += 1;
  });
}

/** Sends `answer` (a JSON-RPC answer) with `padBytes` more bytes in its result's metadata, as fast as the socket takes them. */
function padded(response: ServerResponse, wire: WireStats, answer: string, padBytes: number): void {
  const { id, result } = JSON.parse(answer) as { id: unknown; result: Record<string, unknown> };
  const rest = JSON.stringify({ ...result, metadata: undefined }).slice(1);
  const tail = Buffer.from(`"}${rest === '}' ? '}' : `,${rest}`}}`);
  response.removeHeader('content-length');
  response.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let left = padBytes;
  const send = (bytes: Buffer): boolean => {
    wire.paddedBytesSent += bytes.length;
    return response.write(bytes);
  };
  const write = (): void => {
    while (left > 0 && !response.destroyed) {
      const size = Math.min(left, chunk.length);
      left -= size;
      if (!send(chunk.subarray(0, size))) return void response.once('drain', write);
    }
    if (response.destroyed) return;
    send(tail);
    response.end(() => (wire.paddedAnswersCompleted += 1));
  };
  send(Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"metadata":{"pad":"`));
  write();
}

/** Starts an upstream A2A agent on a loopback port. */
export async function startUpstreamAgent(options: UpstreamAgentOptions): Promise<UpstreamAgent> {
  const expressModule = 'express';
  const { default: express } = (await import(expressModule)) as { default: () => ExpressApp };
  const app = express();
  const tasksCreated: Message[] = [];
  const received: Message[] = [];
  const store = new RecordingTaskStore();
  const calls: SeenCall[] = [];
  let answerDelayed = false;
  let posts = 0;
  let url = '';
  let card: AgentCard | null = null;
  let cardFields: Record<string, unknown> = {};
  const wire: WireStats = { dripping: 0, dripsClosed: 0, paddedBytesSent: 0, paddedAnswersCompleted: 0 };
  let cardDrips = false;
  app.get('/.well-known/agent-card.json', (_request, response) => {
    if (cardDrips) return drip(response as unknown as ServerResponse, wire);
    response.json({ ...(servedCard(options, url, card as AgentCard) as Record<string, unknown>), ...cardFields });
  });
  app.use((request: ExpressRequest, response: ExpressResponse, next: Next) => {
    calls.push({ method: request.method, path: request.path, headers: { ...request.headers } });
    const post = request.method === 'POST' ? ++posts : 0;
    const shape = post > 0 ? options.shapeAnswer?.(post) : undefined;
    if (shape !== undefined) {
      const raw = response as unknown as ServerResponse;
      const end = response.end;
      response.end = (...args: unknown[]) => {
        response.end = end;
        if (shape === 'drip') drip(raw, wire);
        else padded(raw, wire, String(args[0] ?? ''), shape.padBytes);
        return response;
      };
    }
    if (post > 1 && options.holdLaterAnswers) {
      const held = options.holdLaterAnswers;
      const end = response.end.bind(response);
      response.end = (...args: unknown[]) => void held.then(() => end(...args));
    }
    if (options.delayFirstAnswerMs && !answerDelayed && request.method === 'POST') {
      answerDelayed = true;
      const end = response.end.bind(response);
      response.end = (...args: unknown[]) => setTimeout(() => end(...args), options.delayFirstAnswerMs);
    }
    const required = options.requireHeader;
    if (required && request.headers[required.name.toLowerCase()] !== required.value) {
      response.status(401).json({ error: 'unauthenticated' });
      return;
    }
    const verify = options.verifyAuthorization;
    const verifyRequest = options.verifyRequest;
    const authorization = request.headers.authorization;
    const checks = [
      ...(verify ? [() => verify(typeof authorization === 'string' ? authorization : undefined)] : []),
      ...(verifyRequest ? [() => verifyRequest({ method: request.method, path: request.path, headers: { ...request.headers } })] : []),
    ];
    if (checks.length === 0) return next();
    void (async () => {
      for (const check of checks) if (!(await check())) return false;
      return true;
    })().then(
      (valid) => (valid ? next() : response.status(401).json({ error: 'unauthenticated' })),
      () => response.status(401).json({ error: 'unauthenticated' }),
    );
  });
  const tls = options.tls;
  const listen = (port: number) =>
    new Promise<Server>((resolve) => {
      if (tls) {
        const secure = createHttpsServer(
          { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: true, rejectUnauthorized: true },
          app as unknown as RequestListener,
        );
        secure.listen(port, '127.0.0.1', () => resolve(secure));
        return;
      }
      const listening = app.listen(port, '127.0.0.1', () => resolve(listening));
    });
  let server = await listen(options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  card = sdkCard(url, options.binding, options.streaming === true, options.pushNotifications === true);
  let reached: () => void = () => undefined;
  let openGate: () => void = () => undefined;
  const atGate = new Promise<void>((resolve) => (reached = resolve));
  const opened = new Promise<void>((resolve) => (openGate = resolve));
  const executor = new EchoExecutor(
    options.behaviour ?? 'echo',
    tasksCreated,
    received,
    { reached, opened },
    { data: options.answerData, texts: options.answerTexts },
  );
  const pushes: SentPush[] = [];
  const pushStore = new InMemoryPushNotificationStore();
  const requestHandler = new DefaultRequestHandler(
    card,
    store,
    executor,
    new DefaultExecutionEventBusManager(),
    pushStore,
    new RecordingPushSender(pushStore, pushes),
  );
  const stop = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const legacyCompat = { enabled: true };
  app.use(
    options.binding === 'JSONRPC'
      ? jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat })
      : restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat }),
  );
  return {
    url,
    cardUrl: `${url}/.well-known/agent-card.json`,
    port,
    tasksCreated,
    received,
    tasks: store.seen,
    calls,
    pushes,
    atGate,
    openGate: () => openGate(),
    kill: stop,
    revive: async () => {
      server = await listen(port);
    },
    setCard: (fields) => {
      cardFields = fields;
    },
    dripCard: () => {
      cardDrips = true;
    },
    wire,
    close: async () => {
      openGate();
      if (server.listening) await stop();
    },
  };
}
