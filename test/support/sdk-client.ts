import { randomUUID } from 'node:crypto';
import { Role, type Message, type StreamResponse, type TaskState } from '@a2a-js/sdk';
import {
  ClientFactory,
  ClientFactoryOptions,
  JsonRpcTransportFactory,
  type AuthenticationHandler,
  type BeforeArgs,
  type CallInterceptor,
  type Client,
} from '@a2a-js/sdk/client';
import type { RegisteredTestAgent } from './agents';
import type { RelayHarness } from './relay-harness';

/** Puts the agent's API key on every call of the official SDK client, as a vanilla A2A client would. */
export function apiKeyInterceptor(apiKey: string): CallInterceptor {
  return {
    async before(args: BeforeArgs) {
      args.options = { ...args.options, serviceParameters: { ...args.options?.serviceParameters, 'X-API-Key': apiKey } };
    },
    async after() {},
  };
}

/**
 * The SDK's authentication handler for bearer access tokens (e.g. OAuth2 client credentials): the
 * token from `getToken` on every request, and one retry with a fresh token after a 401.
 */
export function bearerTokenAuth(getToken: () => Promise<string>): AuthenticationHandler & { tokensFetched: () => number } {
  let token: string | undefined;
  let fetched = 0;
  const fresh = async (): Promise<string> => {
    fetched += 1;
    token = await getToken();
    return token;
  };
  return {
    async headers() {
      return { authorization: `Bearer ${token ?? (await fresh())}` };
    },
    async shouldRetryWithHeaders(_request, response) {
      if (response.status !== 401) return undefined;
      return { authorization: `Bearer ${await fresh()}` };
    },
    tokensFetched: () => fetched,
  };
}

/** A stream event of the official SDK in short: what it is and the task state it carries. */
export function summary(event: StreamResponse): [string, TaskState | undefined] {
  switch (event.payload?.$case) {
    case 'task':
      return ['task', event.payload.value.status?.state];
    case 'statusUpdate':
      return ['statusUpdate', event.payload.value.status?.state];
    default:
      return [event.payload?.$case ?? 'none', undefined];
  }
}

/** Reads the next event of an SDK stream; fails if the stream ended. */
export async function nextEvent(events: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse> {
  const item = await events.next();
  if (item.done) throw new Error('the stream ended');
  return item.value;
}

/** Reads an SDK stream to its end. */
export async function drain(events: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse[]> {
  const rest: StreamResponse[] = [];
  for await (const event of events) rest.push(event);
  return rest;
}

/** A sender: the official SDK client (JSON-RPC) on the relay's endpoint of an agent, discovered from the relay's card, with the sender's key. */
export function senderClient(relay: RelayHarness, sender: RegisteredTestAgent, handle: string): Promise<Client> {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory()],
      clientConfig: { interceptors: [apiKeyInterceptor(sender.api_key)] },
    }),
  );
  return factory.createFromUrl(`${relay.url}/a2a/${handle}/`);
}

/** A user's text message in the SDK's v1.0 shape, with a fresh message id. */
export function userMessage(text: string): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId: '',
    contextId: '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}
