import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { PUSH_CONFIG_LIMITS, TASK_LIMITS } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { expectRpcError, rpc, rpcErrorFacts, type Json } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

/**
 * Over-limit input is refused by the edge with the limit of the tasks contract (libs/contracts
 * limits), named as the client wrote it in each dialect (AgentRelay, A2A v0.3 and v1.0), and
 * nothing of it is written.
 */
describe('input limits', () => {
  let relay: RelayHarness;
  let db: Client;
  let org: string;
  let alice: RegisteredTestAgent;

  const textParts = (count: number): Array<{ text: string }> => Array.from({ length: count }, (_, index) => ({ text: `part ${index}` }));
  const tooLongText = 'x'.repeat(TASK_LIMITS.textPartChars + 1);
  const tooLongName = 'n'.repeat(TASK_LIMITS.fileNameChars + 1);

  /** What the tasks schema holds of the tasks between alice and `agent`: tasks, messages, artifacts, push configs. */
  async function stored(agent: RegisteredTestAgent): Promise<Json> {
    const result = await db.query(
      `SELECT (SELECT count(*) FROM "tasks"."tasks" t WHERE t."recipient_id" = $1)::int AS tasks,
              (SELECT count(*) FROM "tasks"."messages" m JOIN "tasks"."tasks" t ON t."id" = m."task_id" WHERE t."recipient_id" = $1)::int AS messages,
              (SELECT count(*) FROM "tasks"."artifacts" a JOIN "tasks"."tasks" t ON t."id" = a."task_id" WHERE t."recipient_id" = $1)::int AS artifacts,
              (SELECT count(*) FROM "tasks"."push_configs" p JOIN "tasks"."tasks" t ON t."id" = p."task_id" WHERE t."recipient_id" = $1)::int AS push_configs`,
      [agent.agent.id],
    );
    return result.rows[0];
  }

  async function recipient(name: string): Promise<RegisteredTestAgent> {
    return registerAgent(relay, { handle: uniqueHandle(name, org), name });
  }

  function agentRelaySend(to: RegisteredTestAgent, parts: unknown[], extra: Json = {}) {
    return rpc(relay.url, alice.api_key, 'message/send', { recipient: to.agent.handle, intent: 'inform', message: { role: 'user', parts, ...extra } });
  }

  function v03Send(to: RegisteredTestAgent, parts: unknown[], extra: Json = {}) {
    return rpc(
      relay.url,
      alice.api_key,
      'message/send',
      { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts, ...extra }, configuration: { blocking: false } },
      { path: `/a2a/${to.agent.handle}` },
    );
  }

  function v10(agent: RegisteredTestAgent, path: string, method: string, params: Json) {
    return rpc(relay.url, agent.api_key, method, params, { path, headers: { 'a2a-version': '1.0' } });
  }

  function v10Send(to: RegisteredTestAgent, parts: unknown[], extra: Json = {}) {
    return v10(alice, `/a2a/${to.agent.handle}`, 'SendMessage', {
      message: { messageId: randomUUID(), role: 'ROLE_USER', parts, ...extra },
      configuration: { returnImmediately: true },
    });
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    org = `inlim${Math.random().toString(36).slice(2, 7)}`;
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', org), name: 'Alice' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('refuses a message of more parts than the contract allows, in every dialect, and creates no task', async () => {
    const bob = await recipient('bob');
    const parts = TASK_LIMITS.partsPerMessage + 1;
    const agentRelay = await agentRelaySend(
      bob,
      Array.from({ length: parts }, () => ({ type: 'text', text: 'hi' })),
    );
    const v03 = await v03Send(
      bob,
      Array.from({ length: parts }, () => ({ kind: 'text', text: 'hi' })),
    );
    const v1 = await v10Send(bob, textParts(parts));
    for (const response of [agentRelay, v03, v1]) {
      expectRpcError(response.body.error, { code: -32602, field: 'message.parts' });
      expect(response.body.error?.message).toContain(`at most ${TASK_LIMITS.partsPerMessage} parts`);
    }
    expect(rpcErrorFacts(v1.body.error).shape).toBe('error-info');

    // The limit itself passes.
    const fits = await v10Send(bob, textParts(TASK_LIMITS.partsPerMessage));
    expect(fits.body.error).toBeUndefined();
    expect(await stored(bob)).toEqual({ tasks: 1, messages: 1, artifacts: 0, push_configs: 0 });
  });

  it('refuses a text part longer than the contract allows, in every dialect, on a new task and on an existing one', async () => {
    const carol = await recipient('carol');
    const agentRelay = await agentRelaySend(carol, [{ type: 'text', text: tooLongText }]);
    const v03 = await v03Send(carol, [{ kind: 'text', text: tooLongText }]);
    const v1 = await v10Send(carol, [{ text: 'fine' }, { text: tooLongText }]);
    expectRpcError(agentRelay.body.error, { code: -32602, field: 'message.parts[0].text' });
    expectRpcError(v03.body.error, { code: -32602, field: 'message.parts[0].text' });
    expectRpcError(v1.body.error, { code: -32602, field: 'message.parts[1].text' });
    for (const response of [agentRelay, v03, v1]) expect(response.body.error?.message).toContain(`at most ${TASK_LIMITS.textPartChars} characters`);
    expect(await stored(carol)).toEqual({ tasks: 0, messages: 0, artifacts: 0, push_configs: 0 });

    const created = await v10Send(carol, [{ text: 'first' }]);
    const taskId = created.body.result?.task?.id as string;
    expect(taskId).toEqual(expect.any(String));
    const append = await v10Send(carol, [{ text: tooLongText }], { taskId });
    expectRpcError(append.body.error, { code: -32602, field: 'message.parts[0].text' });
    expect(await stored(carol)).toEqual({ tasks: 1, messages: 1, artifacts: 0, push_configs: 0 });
  });

  it('refuses a message id, file name or history length past the contract limit with the A2A field name', async () => {
    const dave = await recipient('dave');
    const messageId = await v10Send(dave, [{ text: 'hi' }], { messageId: 'm'.repeat(TASK_LIMITS.messageIdChars + 1) });
    expectRpcError(messageId.body.error, { code: -32602, field: 'message.messageId' });
    const v1Name = await v10Send(dave, [{ url: 'https://example.com/a.pdf', filename: tooLongName }]);
    expectRpcError(v1Name.body.error, { code: -32602, field: 'message.parts[0].filename' });
    const v03Name = await v03Send(dave, [{ kind: 'file', file: { uri: 'https://example.com/a.pdf', name: tooLongName } }]);
    expectRpcError(v03Name.body.error, { code: -32602, field: 'message.parts[0].file.name' });
    const history = await v10Send(dave, [{ text: 'hi' }]);
    expect(history.body.error).toBeUndefined();
    expect(await stored(dave)).toEqual({ tasks: 1, messages: 1, artifacts: 0, push_configs: 0 });

    const read = await v10(alice, '/a2a', 'GetTask', { id: history.body.result?.task?.id, historyLength: TASK_LIMITS.historyLengthMax + 1 });
    expectRpcError(read.body.error, { code: -32602, field: 'historyLength' });
  });

  it('refuses artifacts past the contract limits from the agent side, and stores none of them', async () => {
    const erin = await recipient('erin');
    const created = await v10Send(erin, [{ text: 'make a report' }]);
    const taskId = created.body.result?.task?.id as string;
    const path = `/a2a/${alice.agent.handle}`;
    const tooMany = await v10(erin, path, 'UpdateStatus', {
      id: taskId,
      artifacts: Array.from({ length: TASK_LIMITS.artifactsPerRequest + 1 }, (_, index) => ({ artifactId: `a${index}`, parts: [{ text: 'x' }] })),
    });
    expectRpcError(tooMany.body.error, { code: -32602, field: 'artifacts' });
    expect(tooMany.body.error?.message).toContain(`at most ${TASK_LIMITS.artifactsPerRequest} artifacts`);
    const longName = await v10(erin, path, 'CompleteTask', {
      id: taskId,
      artifacts: [{ artifactId: 'report', name: 'r'.repeat(TASK_LIMITS.artifactNameChars + 1), parts: [{ text: 'x' }] }],
    });
    expectRpcError(longName.body.error, { code: -32602, field: 'artifacts[0].name' });
    const longText = await v10(erin, path, 'tasks/updateStatus', { id: taskId, artifacts: [{ artifactId: 'log', parts: [{ text: tooLongText }] }] });
    expectRpcError(longText.body.error, { code: -32602, field: 'artifacts[0].parts[0].text' });
    expect(await stored(erin)).toEqual({ tasks: 1, messages: 1, artifacts: 0, push_configs: 0 });
    const task = await v10(alice, '/a2a', 'GetTask', { id: taskId });
    expect(task.body.result?.status?.state).toBe('TASK_STATE_SUBMITTED');
  });

  it('refuses a push config past the contract limits with the A2A field name in both versions, and keeps none', async () => {
    const fay = await recipient('fay');
    const created = await v10Send(fay, [{ text: 'tell me when done' }]);
    const taskId = created.body.result?.task?.id as string;
    const v1 = await v10(alice, '/a2a', 'CreateTaskPushNotificationConfig', { taskId, url: 'https://example.com/hook', token: 'two\nlines' });
    expectRpcError(v1.body.error, { code: -32602, field: 'params.token' });
    const v03 = await rpc(relay.url, alice.api_key, 'tasks/pushNotificationConfig/set', {
      taskId,
      pushNotificationConfig: {
        url: 'https://example.com/hook',
        authentication: { schemes: Array.from({ length: PUSH_CONFIG_LIMITS.schemesPerConfig + 1 }, (_, index) => `S${index}`) },
      },
    });
    expectRpcError(v03.body.error, { code: -32602, field: 'pushNotificationConfig.authentication.schemes' });
    const longUrl = await v10(alice, '/a2a', 'CreateTaskPushNotificationConfig', {
      taskId,
      url: `https://example.com/${'p'.repeat(PUSH_CONFIG_LIMITS.urlChars)}`,
    });
    expectRpcError(longUrl.body.error, { code: -32602, field: 'params.url' });
    expect(await stored(fay)).toEqual({ tasks: 1, messages: 1, artifacts: 0, push_configs: 0 });
  });

  it('fails a task with a status message longer than a reason may be: the reason is its first characters, the message whole', async () => {
    const gus = await recipient('gus');
    const created = await v10Send(gus, [{ text: 'try this' }]);
    const taskId = created.body.result?.task?.id as string;
    const text = 'why '.repeat(TASK_LIMITS.reasonChars);
    const failed = await v10(gus, `/a2a/${alice.agent.handle}`, 'UpdateStatus', {
      id: taskId,
      status: { state: 'TASK_STATE_FAILED', message: { messageId: randomUUID(), role: 'ROLE_AGENT', parts: [{ text }] } },
    });
    expect(failed.body.error).toBeUndefined();
    expect(failed.body.result?.status?.state).toBe('TASK_STATE_FAILED');
    const row = await db.query(`SELECT "reason" FROM "tasks"."tasks" WHERE "id" = $1`, [taskId]);
    expect(row.rows[0].reason).toBe(text.slice(0, TASK_LIMITS.reasonChars));
    const read = await v10(alice, '/a2a', 'GetTask', { id: taskId });
    expect(read.body.result?.history.at(-1).parts[0].text).toBe(text);
  });

  it('answers a task id the tasks service cannot parse as task not found', async () => {
    const tooLong = await v10(alice, '/a2a', 'GetTask', { id: 'T'.repeat(TASK_LIMITS.taskIdChars + 1) });
    expectRpcError(tooLong.body.error, { code: -32001 });
    const cancel = await rpc(relay.url, alice.api_key, 'tasks/cancel', { id: 'T'.repeat(TASK_LIMITS.taskIdChars + 1) });
    expectRpcError(cancel.body.error, { code: -32001 });
  });
});
