import type { StreamResponse, TaskState } from '@a2a-js/sdk';
import type { AuthenticationHandler, BeforeArgs, CallInterceptor } from '@a2a-js/sdk/client';

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
