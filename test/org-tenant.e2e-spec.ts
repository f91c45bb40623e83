import { randomBytes, randomUUID } from 'node:crypto';
import request from 'supertest';
import { Role, TaskState, type AgentCard, type Message, type Task } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory, type Client } from '@a2a-js/sdk/client';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { apiKeyInterceptor, drain, nextEvent, summary } from './support/sdk-client';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

/** What the SDK client put on the wire: method, path and JSON body of every call. */
interface WireCall {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
}

const wire: WireCall[] = [];

const recordingFetch: typeof fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
  wire.push({ method: init?.method ?? 'GET', path: decodeURIComponent(url.pathname), body });
  return fetch(input, init);
};

function unique(name: string): string {
  return `${name}-${randomBytes(3).toString('hex')}`;
}

function userMessage(text: string, taskId = ''): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
    taskId,
    contextId: '',
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const NOT_BLOCKING = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };

type Binding = 'JSONRPC' | 'HTTP+JSON';

function transportOf(binding: Binding): JsonRpcTransportFactory | RestTransportFactory {
  return binding === 'JSONRPC' ? new JsonRpcTransportFactory({ fetchImpl: recordingFetch }) : new RestTransportFactory({ fetchImpl: recordingFetch });
}

/** The v1.0 card of an agent, as the SDK's resolver reads it from the agent's endpoint. */
function cardOf(relay: RelayHarness, handle: string): Promise<AgentCard> {
  return new DefaultAgentCardResolver().resolve(`${relay.url}/a2a/${handle}/`);
}

/** An SDK client on the one interface of the card with this binding and tenant ('' for the interfaces every agent has). */
async function clientOn(card: AgentCard, binding: Binding, tenant: string, caller: RegisteredTestAgent): Promise<Client> {
  const chosen = card.supportedInterfaces.filter(
    (entry) => entry.protocolBinding === binding && entry.protocolVersion === '1.0' && (entry.tenant ?? '') === tenant,
  );
  expect(chosen).toHaveLength(1);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [transportOf(binding)],
      clientConfig: { interceptors: [apiKeyInterceptor(caller.api_key)] },
    }),
  );
  return factory.createFromAgentCard({ ...card, supportedInterfaces: chosen });
}

async function send(client: Client, text: string): Promise<Task> {
  const result = await client.sendMessage({ tenant: '', message: userMessage(text), configuration: NOT_BLOCKING, metadata: undefined });
  expect(result).toHaveProperty('status');
  return result as Task;
}

describe("an org's own A2A address: the v1.0 tenant on its agents' cards and requests", () => {
  let relay: RelayHarness;
  let payOrg: string;
  let payTenant: string;
  let webTenant: string;
  let plainOrg: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let dave: RegisteredTestAgent;
  let erin: RegisteredTestAgent;

  async function setTenant(org: string, tenant: string | null): Promise<request.Response> {
    return request(relay.url).patch(`/admin/orgs/${org}`).set(admin).send({ tenant });
  }

  /** The agent's card once every edge serves it with the tenant (a change reaches the edges' caches within moments). */
  function cardNaming(handle: string, tenant: string): Promise<AgentCard> {
    return eventually(async () => {
      const card = await cardOf(relay, handle);
      return card.supportedInterfaces.some((entry) => entry.tenant === tenant) && card;
    });
  }

  /** An AgentRelay dialect call, as the recipient's coding agent makes it. */
  async function agentRelay(agent: RegisteredTestAgent, method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const response = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${agent.api_key}`)
      .send({ jsonrpc: '2.0', id: 1, method, params })
      .expect(200);
    if (response.body.error) throw new Error(`${method}: ${JSON.stringify(response.body.error)}`);
    return response.body.result as Record<string, unknown>;
  }

  /** A raw v1.0 JSON-RPC call of `caller` to `handle`'s endpoint. */
  function rpc(caller: RegisteredTestAgent, handle: string, method: string, params: Record<string, unknown>): request.Test {
    return request(relay.url)
      .post(`/a2a/${handle}`)
      .set('authorization', `Bearer ${caller.api_key}`)
      .set('a2a-version', '1.0')
      .send({ jsonrpc: '2.0', id: 1, method, params });
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    payOrg = unique('pay');
    const webOrg = unique('web');
    plainOrg = unique('plain');
    payTenant = unique('acme-payments');
    webTenant = unique('acme-web');
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', payOrg), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', payOrg), name: 'Bob' });
    await registerAgent(relay, { handle: uniqueHandle('carol', webOrg), name: 'Carol' });
    dave = await registerAgent(relay, { handle: uniqueHandle('dave', plainOrg), name: 'Dave' });
    erin = await registerAgent(relay, { handle: uniqueHandle('erin', plainOrg), name: 'Erin' });
    expect((await setTenant(payOrg, payTenant)).status).toBe(200);
    expect((await setTenant(webOrg, webTenant)).status).toBe(200);
  });

  afterAll(async () => {
    await relay?.stop();
  });

  it("serves the org's agents' cards with JSON-RPC and HTTP+JSON 1.0 interfaces naming its tenant, after the interfaces they had", async () => {
    const url = `${relay.url}/a2a/${bob.agent.handle}`;
    const before = [
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' },
      { url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      { url, protocolBinding: 'HTTP+JSON', protocolVersion: '0.3' },
    ];
    const expected = [
      ...before,
      { url, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: payTenant },
      { url, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: payTenant },
    ];
    await eventually(async () => {
      const card = await request(relay.url).get(`/a2a/${bob.agent.handle}/.well-known/agent-card.json`).expect(200);
      expect(card.body.supportedInterfaces).toEqual(expected);
      return true;
    });
    const wellKnown = await request(relay.url)
      .get(`/.well-known/agent-card.json?id=${encodeURIComponent(bob.agent.handle)}`)
      .set('a2a-version', '1.0')
      .expect(200);
    expect(wellKnown.body.supportedInterfaces).toEqual(expected);
    const sdkCard = await cardOf(relay, bob.agent.handle);
    expect(sdkCard.supportedInterfaces.filter((entry) => entry.tenant === payTenant)).toHaveLength(2);
  });

  it.each(['JSONRPC', 'HTTP+JSON'] as const)(
    "talks to the org's agent through the %s tenant interface of its card: send, get, list, cancel and the extended card carry the tenant",
    async (binding) => {
      const client = await clientOn(await cardNaming(bob.agent.handle, payTenant), binding, payTenant, alice);
      const start = wire.length;
      const task = await send(client, `Reconcile the ledger over ${binding}`);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
      expect(task.metadata?.relay).toMatchObject({ sender: alice.agent.handle, recipient: bob.agent.handle });
      const read = await client.getTask({ tenant: '', id: task.id, historyLength: 1 });
      expect(read.id).toBe(task.id);
      const listed = await client.listTasks({
        tenant: '',
        contextId: '',
        status: TaskState.TASK_STATE_UNSPECIFIED,
        pageSize: 50,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
      expect(listed.tasks.map((entry) => entry.id)).toContain(task.id);
      const canceled = await client.cancelTask({ tenant: '', id: task.id, metadata: undefined });
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      const extended = await client.getAgentCard();
      expect(extended.supportedInterfaces.filter((entry) => entry.tenant === payTenant)).toHaveLength(2);

      const calls = wire.slice(start);
      expect(calls).toHaveLength(5);
      const endpoint = `/a2a/${bob.agent.handle}`;
      if (binding === 'JSONRPC') {
        for (const call of calls) {
          expect(call.path).toBe(endpoint);
          expect((call.body?.params as Record<string, unknown>).tenant).toBe(payTenant);
        }
        expect(calls.map((call) => call.body?.method)).toEqual(['SendMessage', 'GetTask', 'ListTasks', 'CancelTask', 'GetExtendedAgentCard']);
      } else {
        expect(calls.map((call) => `${call.method} ${call.path.split('?')[0]}`)).toEqual([
          `POST ${endpoint}/${payTenant}/message:send`,
          `GET ${endpoint}/${payTenant}/tasks/${task.id}`,
          `GET ${endpoint}/${payTenant}/tasks`,
          `POST ${endpoint}/${payTenant}/tasks/${task.id}:cancel`,
          `GET ${endpoint}/${payTenant}/extendedAgentCard`,
        ]);
      }
    },
  );

  it.each(['JSONRPC', 'HTTP+JSON'] as const)(
    'streams a send and its resubscription through the %s tenant interface until the recipient completes',
    async (binding) => {
      const client = await clientOn(await cardNaming(bob.agent.handle, payTenant), binding, payTenant, alice);
      const start = wire.length;
      const events = client.sendMessageStream({
        tenant: '',
        message: userMessage(`Stream the ledger over ${binding}`),
        configuration: undefined,
        metadata: undefined,
      });
      const first = await nextEvent(events);
      expect(summary(first)).toEqual(['task', TaskState.TASK_STATE_SUBMITTED]);
      const taskId = first.payload?.$case === 'task' ? first.payload.value.id : '';
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'accept' });
      expect(summary(await nextEvent(events))).toEqual(['statusUpdate', TaskState.TASK_STATE_WORKING]);
      const again = client.resubscribeTask({ tenant: '', id: taskId });
      expect(summary(await nextEvent(again))).toEqual(['task', TaskState.TASK_STATE_WORKING]);
      await agentRelay(bob, 'tasks/update', { task_id: taskId, transition: 'complete', result_summary: 'done' });
      expect((await drain(events)).map(summary).at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);
      expect((await drain(again)).map(summary).at(-1)).toEqual(['statusUpdate', TaskState.TASK_STATE_COMPLETED]);
      const calls = wire.slice(start);
      if (binding === 'JSONRPC') {
        expect(calls.map((call) => [call.body?.method, (call.body?.params as Record<string, unknown>).tenant])).toEqual([
          ['SendStreamingMessage', payTenant],
          ['SubscribeToTask', payTenant],
        ]);
      } else {
        expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual([
          `POST /a2a/${bob.agent.handle}/${payTenant}/message:stream`,
          `${calls[1].method} /a2a/${bob.agent.handle}/${payTenant}/tasks/${taskId}:subscribe`,
        ]);
      }
    },
  );

  it("refuses another org's tenant, an unknown one and a missing agent alike, as an agent not found (JSON-RPC)", async () => {
    for (const [handle, tenant] of [
      [bob.agent.handle, webTenant],
      [bob.agent.handle, unique('nobody')],
      [`nobody-${randomBytes(3).toString('hex')}@${payOrg}`, payTenant],
    ]) {
      const response = await rpc(alice, handle, 'SendMessage', { tenant, message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] } });
      expect(response.status).toBe(404);
      // Worded from what the request named alone: nothing tells an agent of another tenant from no agent.
      expect(response.body.error).toEqual({
        code: -32021,
        message: `No agent ${handle} at the tenant ${tenant}`,
        data: [expect.objectContaining({ reason: 'AGENT_NOT_FOUND', metadata: { relay_reason: 'agent_not_found', handle, tenant } }) as unknown],
      });
    }

    const inbox = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${bob.api_key}`)
      .send({ jsonrpc: '2.0', id: 1, method: 'tasks/list', params: { filter: { role: 'recipient' } } })
      .expect(200);
    const previews = (inbox.body.result.items as { summary_preview: string }[]).map((item) => item.summary_preview);
    expect(previews).not.toContain('hello');
  });

  it("refuses another org's tenant in the HTTP+JSON path, and a body naming another tenant than its path", async () => {
    const body = { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'hello' }] } };
    const wrong = await request(relay.url)
      .post(`/a2a/${bob.agent.handle}/${webTenant}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('a2a-version', '1.0')
      .send(body)
      .expect(404);
    expect(wrong.body.error).toMatchObject({ code: 404, message: `No agent ${bob.agent.handle} at the tenant ${webTenant}` });
    const mixed = await request(relay.url)
      .post(`/a2a/${bob.agent.handle}/${payTenant}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('a2a-version', '1.0')
      .send({ ...body, tenant: webTenant })
      .expect(400);
    expect(mixed.body.error.message).toContain('tenant in the body is not the tenant of the path');
  });

  it('keeps the URLs of before: the interfaces without a tenant and requests naming none answer as they did', async () => {
    const card = await cardOf(relay, bob.agent.handle);
    for (const binding of ['JSONRPC', 'HTTP+JSON'] as const) {
      const client = await clientOn(card, binding, '', alice);
      const start = wire.length;
      const task = await send(client, `Old address over ${binding}`);
      expect((await client.getTask({ tenant: '', id: task.id, historyLength: 0 })).id).toBe(task.id);
      const calls = wire.slice(start);
      if (binding === 'JSONRPC') expect(calls.map((call) => (call.body?.params as Record<string, unknown>).tenant)).toEqual([undefined, undefined]);
      else
        expect(calls.map((call) => `${call.method} ${call.path.split('?')[0]}`)).toEqual([
          `POST /a2a/${bob.agent.handle}/message:send`,
          `GET /a2a/${bob.agent.handle}/tasks/${task.id}`,
        ]);
    }
    const sent = await rpc(alice, bob.agent.handle, 'SendMessage', {
      tenant: '',
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'empty tenant' }] },
      configuration: { returnImmediately: true },
    });
    expect(sent.status).toBe(200);
    expect(sent.body.result.task.status.state).toBe('TASK_STATE_SUBMITTED');
  });

  it("leaves an org without a tenant as it was: its agents' cards name none, and a request naming one is not found", async () => {
    const card = await request(relay.url).get(`/a2a/${dave.agent.handle}/.well-known/agent-card.json`).expect(200);
    expect(card.body.supportedInterfaces).toHaveLength(4);
    expect(JSON.stringify(card.body)).not.toContain('tenant');
    const client = await clientOn(await cardOf(relay, dave.agent.handle), 'JSONRPC', '', erin);
    expect((await send(client, 'no tenant here')).status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const named = await rpc(erin, dave.agent.handle, 'GetTask', { tenant: plainOrg, id: randomUUID() });
    expect(named.status).toBe(404);
    expect(named.body.error.message).toBe(`No agent ${dave.agent.handle} at the tenant ${plainOrg}`);
  });

  it('sets, shows and removes a tenant through the admin API and the CLI; a taken, malformed or reserved one is refused', async () => {
    const org = await request(relay.url).get(`/admin/orgs/${payOrg}`).set(admin).expect(200);
    expect(org.body.tenant).toBe(payTenant);

    const taken = await setTenant(plainOrg, payTenant);
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({ reason: 'tenant_taken', data: { tenant: payTenant, field: 'tenant' } });
    const created = await request(relay.url)
      .post('/admin/orgs')
      .set(admin)
      .send({ name: unique('new'), tenant: payTenant });
    expect(created.status).toBe(409);
    expect(created.body.error.reason).toBe('tenant_taken');
    for (const tenant of ['Acme', 'tasks', 'v1', 'a/b']) {
      const refused = await setTenant(plainOrg, tenant);
      expect(refused.status).toBe(400);
      expect(refused.body.error.fields).toEqual([{ field: 'tenant', messages: [expect.stringMatching(/^tenant (must be|cannot be)/) as unknown] }]);
    }
    expect((await request(relay.url).get(`/admin/orgs/${plainOrg}`).set(admin).expect(200)).body.tenant).toBeNull();

    const cli = async (...argv: string[]): Promise<{ code: number; stdout: string }> => {
      let stdout = '';
      const code = await run(
        argv,
        { RELAY_URL: relay.url, RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN },
        { stdout: (text) => (stdout += text), stderr: () => undefined },
      );
      return { code, stdout };
    };
    const tenant = unique('plain-co');
    const updated = await cli('orgs', 'update', plainOrg, '--tenant', tenant);
    expect(updated.code).toBe(EXIT.ok);
    expect(updated.stdout).toContain(`A2A tenant:    ${tenant}`);
    await eventually(async () => {
      const card = await request(relay.url).get(`/a2a/${dave.agent.handle}/.well-known/agent-card.json`).expect(200);
      expect((card.body.supportedInterfaces as { tenant?: string }[]).filter((entry) => entry.tenant === tenant)).toHaveLength(2);
      return true;
    });
    expect((await rpc(erin, dave.agent.handle, 'ListTasks', { tenant })).status).toBe(200);

    const removed = await cli('orgs', 'update', plainOrg, '--tenant', 'none');
    expect(removed.code).toBe(EXIT.ok);
    expect(removed.stdout).toContain('A2A tenant:    none');
    await eventually(async () => {
      const card = await request(relay.url).get(`/a2a/${dave.agent.handle}/.well-known/agent-card.json`).expect(200);
      expect(card.body.supportedInterfaces).toHaveLength(4);
      return true;
    });
    expect((await rpc(erin, dave.agent.handle, 'ListTasks', { tenant })).status).toBe(404);
  });
});
