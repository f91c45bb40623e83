import { HTTP } from 'cloudevents';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import request from 'supertest';
import {
  eventKindOfSubject,
  eventSchemaFileName,
  prefixedSubject,
  readCloudEventHeaders,
  RELAY_EVENT_KINDS,
  TASK_EVENT_POSITION_HEADER,
  type CloudEventAttributes,
} from '@app/contracts';
import { ensureEventStream, eventStreamName, openJetStream, type JetStreamContext } from '@app/messaging';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { a2aV1, ok } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { createTask } from './support/tasks';
import { testNatsUrl } from './support/test-env';

/** The relay's URI as the services are told it (RELAY_PUBLIC_URL): every event's CloudEvents `source`. */
const PUBLIC_URL = 'http://relay.internal.test:8080';

interface RawEvent {
  subject: string;
  headers: Map<string, string>;
  body: string;
}

describe('relay events are CloudEvents 1.0 in binary content mode, their data valid against the published schemas', () => {
  let relay: RelayHarness;
  let jetStream: JetStreamContext;
  let messages: ConsumerMessages;
  const seen: RawEvent[] = [];
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { RELAY_PUBLIC_URL: PUBLIC_URL } });
    jetStream = await openJetStream({ url: testNatsUrl(), name: 'cloudevents-test' });
    await ensureEventStream(jetStream.jsm, relay.subjectPrefix);
    const consumer = await jetStream.js.consumers.get(eventStreamName(relay.subjectPrefix), {
      filter_subjects: prefixedSubject(relay.subjectPrefix, 'relay.events.>'),
      deliver_policy: DeliverPolicy.All,
    });
    messages = await consumer.consume();
    void (async () => {
      for await (const message of messages) {
        const headers = new Map<string, string>();
        for (const [name, values] of message.headers ?? []) headers.set(name.toLowerCase(), values[0]);
        seen.push({ subject: message.subject, headers, body: message.string() });
      }
    })();
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'acme'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'acme'), name: 'Bob' });
  });

  afterAll(async () => {
    await messages?.close();
    await jetStream?.connection.drain();
    await relay?.stop();
  });

  it('emits every event type, each parsed by the CloudEvents SDK and its data valid against the schema the edge serves at its dataschema', async () => {
    const update = (agent: RegisteredTestAgent, taskId: string, transition: string, extra: Record<string, unknown> = {}) =>
      ok(relay.url, agent.api_key, 'tasks/update', { task_id: taskId, transition, ...extra });
    const reviewed = await createTask(relay.url, alice, bob, 'Review the /users refactor.');
    await update(bob, reviewed, 'accept');
    await update(bob, reviewed, 'request_input', { message: { role: 'user', parts: [{ type: 'text', text: 'Which endpoint first?' }] } });
    await ok(relay.url, alice.api_key, 'message/send', { task_id: reviewed, message: { role: 'user', parts: [{ type: 'text', text: '/users' }] } });
    await a2aV1(relay.url, bob.api_key, 'UpdateStatus', {
      id: reviewed,
      artifacts: [{ artifactId: 'notes', name: 'notes', parts: [{ text: 'Two comments.' }] }],
    });
    const set = await a2aV1(relay.url, alice.api_key, 'CreateTaskPushNotificationConfig', {
      taskId: reviewed,
      url: 'https://hooks.example.com/a2a',
      id: 'cfg-ce',
    });
    expect(set.error).toBeUndefined();
    expect((await a2aV1(relay.url, alice.api_key, 'DeleteTaskPushNotificationConfig', { taskId: reviewed, id: 'cfg-ce' })).error).toBeUndefined();
    await update(bob, reviewed, 'complete', { result_summary: 'Reviewed.' });
    const declined = await createTask(relay.url, alice, bob, 'Not for Bob.');
    await update(bob, declined, 'decline', { reason: 'not my area' });
    const failed = await createTask(relay.url, alice, bob, 'Will break.');
    await update(bob, failed, 'accept');
    await update(bob, failed, 'fail', { reason: 'tests broke' });
    const cancelled = await createTask(relay.url, alice, bob, 'Never mind.');
    await update(alice, cancelled, 'cancel');
    // A hold rule of Bob's trust policy keeps Alice's proposals for a person's approval: `held`.
    await request(relay.url)
      .put(`/admin/agents/${bob.agent.handle}/trust`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ hold: [{ name: 'proposals', intents: ['propose_action'] }] })
      .expect(200);
    const held = await ok(relay.url, alice.api_key, 'message/send', {
      recipient: bob.agent.handle,
      intent: 'propose_action',
      message: { role: 'user', parts: [{ type: 'text', text: 'Drop the legacy table.' }] },
      proposed_action: { description: 'drop the legacy table', target_files: [], rationale: 'nothing reads it' },
    });
    expect(held.status.state).toBe('held');

    const kinds = RELAY_EVENT_KINDS.map((kind) => kind.cloudEventType).sort();
    const types = (): string[] => [...new Set(seen.map((event) => event.headers.get('ce-type') ?? `none:${event.subject}`))].sort();
    await eventually(() => expect(types()).toEqual(kinds), 30000);

    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    const validators = new Map<string, ReturnType<typeof ajv.compile>>();
    for (const event of seen) {
      const attributes = readCloudEventHeaders((name) => event.headers.get(name.toLowerCase())) as CloudEventAttributes;
      const data = JSON.parse(event.body) as { event_id: string; occurred_at: string; task_id?: string; agent_id?: string };
      const kind = eventKindOfSubject(event.subject.slice(relay.subjectPrefix.length + 1))!;
      expect(attributes).toEqual({
        specversion: '1.0',
        id: data.event_id,
        source: PUBLIC_URL,
        type: kind.cloudEventType,
        subject: data.task_id ?? data.agent_id,
        time: data.occurred_at,
        datacontenttype: 'application/json',
        dataschema: `${PUBLIC_URL}/schemas/events/${eventSchemaFileName(kind)}`,
      });
      expect(event.headers.get('nats-msg-id')).toBe(data.event_id);
      if (kind.publisher === 'tasks') expect(event.headers.get(TASK_EVENT_POSITION_HEADER.toLowerCase())).toMatch(/^[0-9]+$/);
      // The official SDK reads the message as the binary-mode binding does.
      const ceHeaders = Object.fromEntries([...event.headers].filter(([name]) => name.startsWith('ce-') && name !== 'ce-datacontenttype'));
      const parsed = HTTP.toEvent({ headers: { ...ceHeaders, 'content-type': attributes.datacontenttype! }, body: event.body }) as Record<string, unknown>;
      expect(parsed).toMatchObject({
        id: data.event_id,
        type: kind.cloudEventType,
        source: PUBLIC_URL,
        subject: attributes.subject,
        dataschema: attributes.dataschema,
      });
      expect(parsed.data).toEqual(data);
      // toEvent does not validate: the SDK's own check of the attributes (required ones, URI and time formats).
      expect((parsed as unknown as { validate(): boolean }).validate()).toBe(true);
      // The schema the edge serves at the event's dataschema path (this edge's RELAY_PUBLIC_URL is its own address).
      const path = new URL(attributes.dataschema!).pathname;
      if (!validators.has(path)) {
        const response = await request(relay.url).get(path).expect(200);
        expect(response.headers['content-type']).toMatch(/^application\/schema\+json/);
        validators.set(path, ajv.compile(JSON.parse(response.text)));
      }
      const validate = validators.get(path)!;
      expect([kind.name, validate(data), validate.errors ?? null]).toEqual([kind.name, true, null]);
    }
  }, 60000);

  it('serves the AsyncAPI document and the schemas to anyone, with an ETag; an unknown schema is 404', async () => {
    const document = await request(relay.url).get('/asyncapi.json').expect(200);
    expect(document.body.asyncapi).toBe('3.0.0');
    const addresses = Object.values(document.body.channels as Record<string, { address: string }>).map((channel) => channel.address);
    expect(addresses).toContain(prefixedSubject(relay.subjectPrefix, 'relay.events.task.completed'));
    expect(document.headers['access-control-allow-origin']).toBe('*');
    await request(relay.url).get('/asyncapi.json').set('if-none-match', document.headers.etag).expect(304);
    const schema = await request(relay.url).get('/schemas/events/task.completed.v1.json').expect(200);
    expect(JSON.parse(schema.text).$id).toBe(`${relay.url}/schemas/events/task.completed.v1.json`);
    await request(relay.url).get('/schemas/events/task.completed.v9.json').expect(404);
  });
});
