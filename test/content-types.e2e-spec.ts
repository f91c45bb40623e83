import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, rpc, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { countTasksReceivedBy } from './support/tasks';
import { testDatabaseUrl } from './support/test-env';

const PNG = { uri: 'https://files.example.com/shot.png', mimeType: 'image/png' };

/** The ErrorInfo of an HTTP+JSON error body (google.rpc.Status). */
function restErrorInfo(body: Json): Json {
  return ((body.error?.details as Json[] | undefined) ?? []).find((detail) => detail['@type'] === 'type.googleapis.com/google.rpc.ErrorInfo') ?? {};
}

/**
 * A part whose media type the recipient's card does not declare among its input modes is refused
 * (A2A ContentTypeNotSupportedError), in every dialect and binding, before anything is written.
 */
describe('content types a recipient accepts', () => {
  let relay: RelayHarness;
  let db: Client;
  let org: string;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let carol: RegisteredTestAgent;

  const tasksReceivedBy = (agent: RegisteredTestAgent): Promise<number> => countTasksReceivedBy(db, agent);

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    org = `modes${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
    // Bob declares nothing of his own: his card shows the relay's default, text/plain and application/json.
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', org), name: 'Bob' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('refuses an image/png file to a card that declares text/plain and application/json, in every dialect and binding, and creates nothing', async () => {
    const before = await tasksReceivedBy(bob);
    const endpoint = `/a2a/${bob.agent.handle}`;

    const agentRelay = await rpc(relay.url, alice.api_key, 'message/send', {
      recipient: bob.agent.handle,
      intent: 'inform',
      message: {
        role: 'user',
        parts: [
          { type: 'text', text: 'look' },
          { type: 'file', file: { uri: PNG.uri, mime_type: PNG.mimeType } },
        ],
      },
    });
    expect(agentRelay.status).toBe(200);
    expectRpcError(agentRelay.body.error, { code: -32017, reason: 'content_type_not_supported', field: 'message.parts[1]' });
    expect(agentRelay.body.error?.data).toMatchObject({ media_type: 'image/png', accepted_media_types: 'text/plain, application/json' });

    const v03 = await rpc(
      relay.url,
      alice.api_key,
      'message/send',
      { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'file', file: PNG }] } },
      { path: endpoint },
    );
    expectRpcError(v03.body.error, { code: -32005, reason: 'content_type_not_supported', field: 'message.parts[0]', shape: 'data' });

    const v10 = await rpc(
      relay.url,
      alice.api_key,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'look' }, { url: PNG.uri, mediaType: PNG.mimeType }] } },
      { path: endpoint, headers: { 'a2a-version': '1.0' } },
    );
    expectRpcError(v10.body.error, { code: -32005, field: 'message.parts[1]', shape: 'error-info' });
    expect((v10.body.error?.data as Json[])[0]).toMatchObject({ reason: 'CONTENT_TYPE_NOT_SUPPORTED' });

    const rest = await request(relay.url)
      .post(`${endpoint}/message:send`)
      .set('x-api-key', alice.api_key)
      .set('a2a-version', '1.0')
      .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ url: PNG.uri, mediaType: PNG.mimeType }] } });
    expect(rest.status).toBe(400);
    expect(rest.body.error).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(restErrorInfo(rest.body)).toMatchObject({ reason: 'CONTENT_TYPE_NOT_SUPPORTED', metadata: { field: 'message.parts[0]', media_type: 'image/png' } });

    const restV03 = await request(relay.url)
      .post(`${endpoint}/v1/message:send`)
      .set('x-api-key', alice.api_key)
      .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', content: [{ file: { fileWithUri: PNG.uri, mimeType: PNG.mimeType } }] } });
    expect(restV03.status).toBe(400);
    expectRpcError(restV03.body, { code: -32005, reason: 'content_type_not_supported' });

    expect(await tasksReceivedBy(bob)).toBe(before);
  });

  it('refuses a text or data part whose declared media type the card does not list (v1.0 mediaType, v0.3 metadata), and creates nothing', async () => {
    const before = await tasksReceivedBy(bob);
    const endpoint = `/a2a/${bob.agent.handle}`;
    const v10 = await rpc(
      relay.url,
      alice.api_key,
      'SendMessage',
      { message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'ok' }, { text: 'x', mediaType: 'application/x-unsupported' }] } },
      { path: endpoint, headers: { 'a2a-version': '1.0' } },
    );
    expectRpcError(v10.body.error, { code: -32005, field: 'message.parts[1]', shape: 'error-info' });
    expect((v10.body.error?.data as Json[])[0]).toMatchObject({ reason: 'CONTENT_TYPE_NOT_SUPPORTED', metadata: { media_type: 'application/x-unsupported' } });

    const v03 = await rpc(
      relay.url,
      alice.api_key,
      'message/send',
      {
        message: {
          kind: 'message',
          messageId: randomUUID(),
          role: 'user',
          parts: [{ kind: 'data', data: { rows: 3 }, metadata: { mimeType: 'application/x-unsupported' } }],
        },
      },
      { path: endpoint },
    );
    expectRpcError(v03.body.error, { code: -32005, reason: 'content_type_not_supported', field: 'message.parts[0]', shape: 'data' });
    expect(await tasksReceivedBy(bob)).toBe(before);

    // The control: the same text part declaring a type the card lists is relayed.
    const declared = await rpc(
      relay.url,
      alice.api_key,
      'SendMessage',
      {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'x', mediaType: 'text/plain; charset=utf-8' }] },
        configuration: { returnImmediately: true },
      },
      { path: endpoint, headers: { 'a2a-version': '1.0' } },
    );
    expect(declared.body.error).toBeUndefined();
  });

  it("relays text and data parts within the relay's default modes", async () => {
    const sent = await rpc(relay.url, alice.api_key, 'message/send', {
      recipient: bob.agent.handle,
      intent: 'inform',
      message: {
        role: 'user',
        parts: [
          { type: 'text', text: 'rows' },
          { type: 'data', data: { rows: 3 } },
        ],
      },
    });
    expect(sent.body.error).toBeUndefined();
    expect(sent.body.result?.task_id).toEqual(expect.any(String));
  });

  it('follows the input modes an agent declares, with wildcards, parameters ignored, and shows them on its card', async () => {
    carol = await registerAgent(relay, { handle: uniqueHandle('carol', org), name: 'Carol', input_modes: ['text/*', 'image/*'] });
    expect(carol.agent.input_modes).toEqual(['text/*', 'image/*']);
    const card = await request(relay.url).get(`/a2a/${carol.agent.handle}/.well-known/agent-card.json`).expect(200);
    expect(card.body.defaultInputModes).toEqual(['text/*', 'image/*']);

    const endpoint = `/a2a/${carol.agent.handle}`;
    const image = await rpc(
      relay.url,
      alice.api_key,
      'SendMessage',
      {
        message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'see' }, { url: PNG.uri, mediaType: 'IMAGE/PNG; profile=x' }] },
        configuration: { returnImmediately: true },
      },
      { path: endpoint, headers: { 'a2a-version': '1.0' } },
    );
    expect(image.body.error).toBeUndefined();
    const taskId = image.body.result?.task?.id as string;
    expect(taskId).toEqual(expect.any(String));

    const data = await rpc(relay.url, alice.api_key, 'message/send', {
      recipient: carol.agent.handle,
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'data', data: { rows: 3 } }] },
    });
    expectRpcError(data.body.error, { code: -32017, reason: 'content_type_not_supported', field: 'message.parts[0]' });

    // A follow-up on Carol's endpoint goes to Carol: held to her modes too.
    const messagesBefore = await db.query<{ count: string }>(`SELECT count(*) AS count FROM "tasks"."messages" WHERE "task_id" = $1`, [taskId]);
    const pdf = await rpc(
      relay.url,
      alice.api_key,
      'SendMessage',
      {
        message: { messageId: randomUUID(), taskId, role: 'ROLE_USER', parts: [{ url: 'https://files.example.com/a.pdf', mediaType: 'application/pdf' }] },
        configuration: { returnImmediately: true },
      },
      { path: endpoint, headers: { 'a2a-version': '1.0' } },
    );
    expectRpcError(pdf.body.error, { code: -32005, field: 'message.parts[0]' });
    const messagesAfter = await db.query<{ count: string }>(`SELECT count(*) AS count FROM "tasks"."messages" WHERE "task_id" = $1`, [taskId]);
    expect(messagesAfter.rows[0].count).toBe(messagesBefore.rows[0].count);
  });

  it('takes input_modes through the admin API: media types or ranges only, null for the default', async () => {
    const admin = (path: string) => request(relay.url).patch(path).set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    const refused = await admin(`/admin/agents/${carol.agent.handle}`).send({ input_modes: ['pictures'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ reason: 'invalid_params', fields: [expect.objectContaining({ field: 'input_modes' })] });

    const anything = await admin(`/admin/agents/${carol.agent.handle}`).send({ input_modes: ['*/*'] });
    expect(anything.status).toBe(200);
    expect(anything.body.input_modes).toEqual(['*/*']);
    const pdf = await rpc(relay.url, alice.api_key, 'message/send', {
      recipient: carol.agent.handle,
      intent: 'inform',
      message: { role: 'user', parts: [{ type: 'file', file: { uri: 'https://files.example.com/a.pdf', mime_type: 'application/pdf' } }] },
    });
    expect(pdf.body.error).toBeUndefined();

    const reset = await admin(`/admin/agents/${carol.agent.handle}`).send({ input_modes: null });
    expect(reset.body.input_modes).toBeNull();
    const card = await request(relay.url).get(`/a2a/${carol.agent.handle}/.well-known/agent-card.json`).expect(200);
    expect(card.body.defaultInputModes).toEqual(['text/plain', 'application/json']);
  });
});
