import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, SpanKind, trace, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { A2A_PROTOCOL_VERSION, Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory, type CallInterceptor } from '@a2a-js/sdk/client';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore, type AgentExecutor, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import { jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { userMessage } from './sdk-client';

/** The little of express this server uses (express ships no types). */
interface ExpressRequest {
  headers: Record<string, string | string[] | undefined>;
  path: string;
  method: string;
}
interface ExpressResponse {
  on(event: 'finish', listener: () => void): void;
  json(body: unknown): void;
}
interface ExpressApp {
  use(handler: unknown): void;
  get(path: string, handler: (request: ExpressRequest, response: ExpressResponse) => void): void;
  listen(port: number, host: string, callback: () => void): Server;
}

/** Where an agent hands each new task on: an agent's endpoint on the relay, and the agent's own API key there. */
export interface HandOn {
  relayUrl: string;
  recipient: string;
  apiKey: string;
  /**
   * How the agent names the handoff it works on: by the trace context alone (`trace`, the
   * default), or (`reference`) as A2A `referenceTaskIds`, the relay task the delivery's metadata
   * names, with no `traceparent` on its call.
   */
  link?: 'trace' | 'reference';
}

/**
 * An upstream A2A agent of the official SDK's server whose requests are traced as an agent's
 * OpenTelemetry instrumentation traces them: a server span per request continuing the caller's
 * W3C `traceparent`, active (through the process's context manager) while the SDK runs the
 * agent; and each call it makes with the official SDK client a client span whose context goes out
 * as `traceparent`. It passes nothing else on (no `referenceTaskIds`, no relay field) unless told
 * to name the relay task it serves instead (`link: 'reference'`).
 */
export interface TracedUpstreamAgent {
  cardUrl: string;
  /** The `traceparent` headers of the A2A requests it received, in order. */
  receivedTraceParents: string[];
  /** The relay task ids its hand-on calls were answered with. */
  handedOn: string[];
  /** Hands new tasks on to this agent from now on (none: it answers them itself). */
  handOnTo(target: HandOn | null): void;
  close(): Promise<void>;
}

const propagator = new W3CTraceContextPropagator();

function textOf(message: Message): string {
  const part = message.parts.find((entry) => entry.content?.$case === 'text');
  return part?.content?.$case === 'text' ? part.content.value : '';
}

function agentMessage(taskId: string, contextId: string, text: string): Message {
  return {
    messageId: `${taskId}-answer`,
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** What instrumentation of an HTTP client does: the active context goes out as `traceparent` on every call. */
function traceContextInterceptor(apiKey: string, propagate: boolean): CallInterceptor {
  return {
    async before(args) {
      const carrier: Record<string, string> = {};
      if (propagate) propagator.inject(context.active(), carrier, defaultTextMapSetter);
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, ...carrier, 'X-API-Key': apiKey } };
    },
    async after() {},
  };
}

class HandingOnExecutor implements AgentExecutor {
  target: HandOn | null = null;

  constructor(
    private readonly tracer: Tracer,
    private readonly handedOn: string[],
  ) {}

  execute = async (request: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const { taskId, contextId, userMessage: received } = request;
    const task: Task = {
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_WORKING, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [],
      history: [received],
      metadata: undefined,
    };
    bus.publish(AgentEvent.task(task));
    let answer = `done: ${textOf(received)}`;
    const target = this.target;
    if (target) {
      // A client span of the agent's own, active while the official client calls the relay.
      const handedOn = await this.tracer.startActiveSpan('hand on', { kind: SpanKind.CLIENT }, async (span) => {
        try {
          const factory = new ClientFactory(
            ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
              transports: [new JsonRpcTransportFactory()],
              clientConfig: { interceptors: [traceContextInterceptor(target.apiKey, target.link !== 'reference')] },
            }),
          );
          const client = await factory.createFromUrl(`${target.relayUrl}/a2a/${target.recipient}/`);
          const served = (received.metadata as { agentrelay?: { task_id?: string } } | undefined)?.agentrelay?.task_id;
          const message = userMessage(`part of: ${textOf(received)}`);
          if (target.link === 'reference') {
            if (!served) throw new Error('the delivery names no relay task in its metadata');
            message.referenceTaskIds = [served];
          }
          const sent = await client.sendMessage({
            tenant: '',
            message,
            configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
            metadata: undefined,
          });
          return (sent as Task).id;
        } finally {
          span.end();
        }
      });
      this.handedOn.push(handedOn);
      answer = `handed on as ${handedOn}`;
    }
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: { state: TaskState.TASK_STATE_COMPLETED, timestamp: new Date().toISOString(), message: agentMessage(taskId, contextId, answer) },
        metadata: undefined,
      }),
    );
    bus.finished();
  };

  cancelTask = async (): Promise<void> => undefined;
}

/** Starts a traced upstream agent on a loopback port; its spans (service `name`) go to `exporter`. */
export async function startTracedUpstreamAgent(name: string, exporter: SpanExporter): Promise<TracedUpstreamAgent> {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': name }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  // The agent's OpenTelemetry set-up: the process's async-local context manager and W3C propagator
  // (what is registered already, by the relay in this process or another agent, stays).
  provider.register();
  const tracer = provider.getTracer(name);
  const expressModule = 'express';
  const { default: express } = (await import(expressModule)) as { default: () => ExpressApp };
  const app = express();
  const receivedTraceParents: string[] = [];
  const handedOn: string[] = [];
  let url = '';
  const card = (): AgentCard => ({
    name,
    description: 'An upstream agent that hands work on',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION }],
    provider: { organization: 'AgentRelay tests', url: 'http://127.0.0.1/' },
    version: '1.0.0',
    capabilities: { streaming: false, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'work', name: 'work', description: 'Works', tags: ['work'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
    documentationUrl: '',
    signatures: [],
  });
  app.get('/.well-known/agent-card.json', (_request, response) => response.json(card()));
  // The server side of the instrumentation: each A2A request in a server span continuing its caller's trace.
  app.use((request: ExpressRequest, response: ExpressResponse, next: () => void) => {
    if (request.method !== 'POST') return next();
    const traceparent = request.headers.traceparent;
    if (typeof traceparent === 'string') receivedTraceParents.push(traceparent);
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const span = tracer.startSpan(`POST ${request.path}`, { kind: SpanKind.SERVER }, parent);
    response.on('finish', () => span.end());
    const active = trace.setSpan(parent, span);
    // The request's stream events (its body) run in the span's context too.
    context.bind(active, request as unknown as NodeJS.EventEmitter);
    context.with(active, next);
  });
  const executor = new HandingOnExecutor(tracer, handedOn);
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const requestHandler = new DefaultRequestHandler(card(), new InMemoryTaskStore(), executor);
  app.use(jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return {
    cardUrl: `${url}/.well-known/agent-card.json`,
    receivedTraceParents,
    handedOn,
    handOnTo: (target) => {
      executor.target = target;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await provider.shutdown();
    },
  };
}
