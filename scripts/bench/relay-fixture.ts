/**
 * The relay side of the bench, through its public HTTP API only: agents registered with the admin
 * API (one sender/recipient pair per client slot so no agent meets the rate limit, a pair for the
 * inbox, a pair whose recipient has a webhook for fanout) and the JSON-RPC calls of the scenarios.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { HttpClient, JsonReply } from './load-generator';
import type { UpstreamMode } from './options';

export interface RelayAgent {
  id: string;
  handle: string;
  key: string;
}

export interface RelayPair {
  sender: RelayAgent;
  recipient: RelayAgent;
}

export interface RelayFixture {
  org: string;
  pairs: RelayPair[];
  inbox: RelayPair;
  fanout: RelayPair;
  /** The agent that hands each slot's sender the handoffs its linked creates serve (`create-linked`): the chains' roots. */
  origin: RelayAgent;
  /** The agents registered with an upstream A2A server's card, by how that server answers (`--scenarios upstream…`). */
  upstreams: Partial<Record<UpstreamMode, RelayAgent>>;
}

async function register(client: HttpClient, adminToken: string, handle: string, extra: Record<string, unknown> = {}): Promise<RelayAgent> {
  const reply = await client.post('/admin/agents', { handle, name: handle.split('@')[0], ...extra }, { authorization: `Bearer ${adminToken}` });
  const body = reply.json as { agent?: { id?: string; handle?: string }; api_key?: string } | undefined;
  if (reply.status !== 201 || !body?.agent?.id || !body.api_key)
    throw new Error(`registering ${handle} answered ${reply.status}: ${JSON.stringify(reply.json)}`);
  return { id: body.agent.id, handle: body.agent.handle ?? handle, key: body.api_key };
}

export async function setUpRelayAgents(
  client: HttpClient,
  adminToken: string,
  slots: number,
  webhookUrl: string,
  upstreamCardUrls: Partial<Record<UpstreamMode, string>> = {},
): Promise<RelayFixture> {
  const org = `bench${randomBytes(3).toString('hex')}`;
  const pairs: RelayPair[] = [];
  for (let first = 0; first < slots; first += 8) {
    const batch = Array.from({ length: Math.min(8, slots - first) }, async (_, offset) => {
      const slot = first + offset;
      return { sender: await register(client, adminToken, `s${slot}@${org}`), recipient: await register(client, adminToken, `r${slot}@${org}`) };
    });
    pairs.push(...(await Promise.all(batch)));
  }
  const inbox = { sender: await register(client, adminToken, `inbox-s@${org}`), recipient: await register(client, adminToken, `inbox-r@${org}`) };
  const fanout = {
    sender: await register(client, adminToken, `fan-s@${org}`),
    recipient: await register(client, adminToken, `fan-r@${org}`, { notification_webhook_url: webhookUrl }),
  };
  const origin = await register(client, adminToken, `origin@${org}`);
  const upstreams: Partial<Record<UpstreamMode, RelayAgent>> = {};
  for (const [mode, cardUrl] of Object.entries(upstreamCardUrls) as Array<[UpstreamMode, string]>)
    upstreams[mode] = await register(client, adminToken, `${UPSTREAM_HANDLE_PREFIX[mode]}@${org}`, { upstream: { card_url: cardUrl } });
  return { org, pairs, inbox, fanout, origin, upstreams };
}

const UPSTREAM_HANDLE_PREFIX: Record<UpstreamMode, string> = { poll: 'up', stream: 'up-stream', push: 'up-push' };

const bearer = (agent: RelayAgent): Record<string, string> => ({ authorization: `Bearer ${agent.key}` });

/** The JSON-RPC result, or an Error naming what came back instead (the load generator keeps a few as samples). */
function result(reply: JsonReply, what: string): Record<string, unknown> {
  const value = reply.status === 200 ? (reply.json?.result as Record<string, unknown> | undefined) : undefined;
  if (value === undefined) throw new Error(`${what}: HTTP ${reply.status} ${JSON.stringify(reply.json?.error ?? reply.json ?? null).slice(0, 300)}`);
  return value;
}

/** AgentRelay `message/send` creating a handoff; the new task id, or undefined. */
export async function relayCreate(client: HttpClient, pair: RelayPair, index: number): Promise<string | undefined> {
  const reply = await client.post(
    '/a2a',
    {
      jsonrpc: '2.0',
      id: index,
      method: 'message/send',
      params: { recipient: pair.recipient.handle, message: { role: 'user', parts: [{ type: 'text', text: `bench handoff ${index}` }] } },
    },
    bearer(pair.sender),
  );
  const taskId = result(reply, 'message/send')?.task_id;
  return typeof taskId === 'string' ? taskId : undefined;
}

/** A W3C `traceparent` of trace `traceId` with a new span id, sampled. */
export const traceparentOf = (traceId: string): string => `00-${traceId}-${randomBytes(8).toString('hex')}-01`;

/**
 * AgentRelay `message/send` creating a handoff that serves `parent`: named as `parent_task_id`
 * (`link: 'named'`), or by the call's `traceparent` alone in the parent's trace `traceId`
 * (`link: 'trace'`). The new task id once the answer's `chain` names that parent; an Error otherwise.
 */
export async function relayCreateLinked(
  client: HttpClient,
  pair: RelayPair,
  parent: { taskId: string; traceId: string },
  link: 'named' | 'trace',
  index: number,
): Promise<string> {
  const reply = await client.post(
    '/a2a',
    {
      jsonrpc: '2.0',
      id: index,
      method: 'message/send',
      params: {
        recipient: pair.recipient.handle,
        message: { role: 'user', parts: [{ type: 'text', text: `bench handoff ${index}` }] },
        ...(link === 'named' ? { parent_task_id: parent.taskId } : {}),
      },
    },
    { ...bearer(pair.sender), ...(link === 'trace' ? { traceparent: traceparentOf(parent.traceId) } : {}) },
  );
  const answer = result(reply, 'message/send') as { task_id?: unknown; chain?: { parent_task_id?: unknown } };
  if (typeof answer.task_id !== 'string') throw new Error(`message/send answered no task_id: ${JSON.stringify(answer).slice(0, 300)}`);
  if (answer.chain?.parent_task_id !== parent.taskId)
    throw new Error(`task ${answer.task_id} is not linked to ${parent.taskId} (chain ${JSON.stringify(answer.chain ?? null)})`);
  return answer.task_id;
}

/** A root handoff from `origin` to `recipient`, created in trace `traceId` (its chain keeps that trace); the new task id. */
export async function relayCreateRoot(client: HttpClient, origin: RelayAgent, recipient: RelayAgent, traceId: string, index: number): Promise<string> {
  const reply = await client.post(
    '/a2a',
    {
      jsonrpc: '2.0',
      id: index,
      method: 'message/send',
      params: { recipient: recipient.handle, message: { role: 'user', parts: [{ type: 'text', text: `bench chain root ${index}` }] } },
    },
    { ...bearer(origin), traceparent: traceparentOf(traceId) },
  );
  const taskId = result(reply, 'message/send')?.task_id;
  if (typeof taskId !== 'string') throw new Error('a chain root was refused');
  return taskId;
}

/** A2A v1.0 `SendMessage` on the recipient's endpoint, returnImmediately; the new task id, or undefined. */
export async function relaySendMessage(client: HttpClient, pair: RelayPair, index: number): Promise<string | undefined> {
  const reply = await client.post(
    `/a2a/${pair.recipient.handle}`,
    {
      jsonrpc: '2.0',
      id: index,
      method: 'SendMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `bench v1 ${index}` }] }, configuration: { returnImmediately: true } },
    },
    { ...bearer(pair.sender), 'a2a-version': '1.0' },
  );
  const task = result(reply, 'SendMessage')?.task as { id?: string } | undefined;
  return typeof task?.id === 'string' ? task.id : undefined;
}

/** AgentRelay `tasks/get`; true when the task came back. */
export async function relayGet(client: HttpClient, caller: RelayAgent, taskId: string, index: number): Promise<boolean> {
  const reply = await client.post('/a2a', { jsonrpc: '2.0', id: index, method: 'tasks/get', params: { task_id: taskId } }, bearer(caller));
  return result(reply, 'tasks/get')?.task_id === taskId;
}

async function call(client: HttpClient, caller: RelayAgent, method: string, params: Record<string, unknown>, index: number): Promise<boolean> {
  return result(await client.post('/a2a', { jsonrpc: '2.0', id: index, method, params }, bearer(caller)), method) !== undefined;
}

/** create → accept → a message each way → complete; the task id when every step succeeded. */
export async function relayLifecycle(client: HttpClient, pair: RelayPair, index: number): Promise<string | undefined> {
  const taskId = await relayCreate(client, pair, index);
  if (!taskId) return undefined;
  const steps: Array<[RelayAgent, string, Record<string, unknown>]> = [
    [pair.recipient, 'tasks/update', { task_id: taskId, transition: 'accept' }],
    [pair.recipient, 'message/send', { task_id: taskId, message: { role: 'user', parts: [{ type: 'text', text: 'Which endpoint first?' }] } }],
    [pair.sender, 'message/send', { task_id: taskId, message: { role: 'user', parts: [{ type: 'text', text: 'Start with /users.' }] } }],
    [pair.recipient, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'Done.' }],
  ];
  for (const [caller, method, params] of steps) {
    if (!(await call(client, caller, method, params, index))) return undefined;
  }
  return taskId;
}

/** AgentRelay `tasks/list`, the recipient's inbox, a page of 50; the number of items. */
export async function relayInbox(client: HttpClient, recipient: RelayAgent, index: number): Promise<number> {
  const reply = await client.post(
    '/a2a',
    { jsonrpc: '2.0', id: index, method: 'tasks/list', params: { filter: { role: 'recipient' }, page: { limit: 50 } } },
    bearer(recipient),
  );
  const items = result(reply, 'tasks/list')?.items;
  return Array.isArray(items) ? items.length : -1;
}

/** The live inbox (`tasks/watch`) without a Last-Event-ID: the id of its `ready` event (where the caller's inbox stands). */
export async function relayInboxReadyId(client: HttpClient, caller: RelayAgent): Promise<string> {
  let readyId: string | undefined;
  await client.readEvents('/a2a', { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} }, bearer(caller), (data, id) => {
    if ((data as { result?: { event?: string } }).result?.event === 'ready') readyId = id;
    return readyId !== undefined;
  });
  if (!readyId) throw new Error('tasks/watch sent no ready event');
  return readyId;
}

/** The live inbox resumed with `lastEventId`: true once `expected` replayed events arrived. */
export async function relayInboxReplay(client: HttpClient, caller: RelayAgent, lastEventId: string, expected: number): Promise<boolean> {
  let replayed = 0;
  return client.readEvents(
    '/a2a',
    { jsonrpc: '2.0', id: 'inbox', method: 'tasks/watch', params: {} },
    { ...bearer(caller), 'last-event-id': lastEventId },
    (data) => {
      const event = (data as { result?: { event?: string }; error?: unknown }).result?.event;
      if (event === undefined) throw new Error(`tasks/watch: ${JSON.stringify(data).slice(0, 300)}`);
      if (event !== 'ready') replayed += 1;
      return replayed >= expected;
    },
  );
}

/** A2A v1.0 `SendMessage` (returnImmediately) to a baseline; the task id, or undefined. */
export async function baselineSendMessage(client: HttpClient, index: number): Promise<string | undefined> {
  const reply = await client.post(
    '/',
    {
      jsonrpc: '2.0',
      id: index,
      method: 'SendMessage',
      params: { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: `bench v1 ${index}` }] }, configuration: { returnImmediately: true } },
    },
    { 'a2a-version': '1.0' },
  );
  const answer = result(reply, 'SendMessage') as { task?: { id?: string }; id?: string } | undefined;
  const id = answer?.task?.id ?? answer?.id;
  return typeof id === 'string' ? id : undefined;
}

/** A2A v1.0 `GetTask` on a baseline; true when the task came back. */
export async function baselineGet(client: HttpClient, taskId: string, index: number): Promise<boolean> {
  const reply = await client.post('/', { jsonrpc: '2.0', id: index, method: 'GetTask', params: { id: taskId } }, { 'a2a-version': '1.0' });
  const answer = result(reply, 'GetTask') as { task?: { id?: string }; id?: string } | undefined;
  return (answer?.task?.id ?? answer?.id) === taskId;
}
