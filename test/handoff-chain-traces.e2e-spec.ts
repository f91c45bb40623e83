import { randomUUID } from 'node:crypto';
import { Client as PgClient } from 'pg';
import request from 'supertest';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { Task } from '@a2a-js/sdk';
import { useSpanExporterForTests } from '@app/tracing';
import { EXIT, run } from '../apps/cli/src/cli';
import { registerAgent, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { rpc, type Json } from './support/json-rpc';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { senderClient, userMessage } from './support/sdk-client';
import { testDatabaseUrl } from './support/test-env';
import { startTracedUpstreamAgent, type TracedUpstreamAgent } from './support/traced-upstream-agent';
import { WebhookSink } from './support/webhook-sink';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
const nonBlocking = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
const serviceOf = (span: ReadableSpan): string => String(span.resource.attributes['service.name']);
const traceOf = (span: ReadableSpan): string => span.spanContext().traceId;

interface ChainRow {
  id: string;
  sender_handle: string;
  parent_task_id: string | null;
  root_task_id: string | null;
  depth: number;
  trace_id: string;
}

/**
 * Handoff chains linked by trace context alone (docs/chains.md): two upstream agents of the
 * official SDK, traced as an agent's OpenTelemetry instrumentation traces them, hand work on
 * through the relay with the official client, naming no parent; the `traceparent` the relay sent
 * with each delivery, carried on by the agent's instrumentation, links each handoff to the one it
 * serves, and the chain is one trace across the relay's processes and the agents.
 */
describe.each([
  { tracing: true, title: 'with the relay exporting traces' },
  { tracing: false, title: 'with the relay exporting nothing' },
])('handoff chains linked by traceparent, $title', ({ tracing }) => {
  const exporter = new InMemorySpanExporter();
  let relay: RelayHarness;
  let db: PgClient;
  let sink: WebhookSink;
  let org: string;
  const upstreams: TracedUpstreamAgent[] = [];

  const registerUpstream = async (name: string, agent: TracedUpstreamAgent): Promise<RegisteredTestAgent> => {
    const response = await request(relay.url)
      .post('/admin/agents')
      .set(admin)
      .send({ handle: `${name}@${org}`, name, upstream: { card_url: agent.cardUrl } });
    if (response.status !== 201) throw new Error(`registering ${name}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as RegisteredTestAgent;
  };

  const chainRows = async (root: string): Promise<ChainRow[]> =>
    (
      await db.query<ChainRow>(
        `SELECT "id", "sender_handle", "parent_task_id", "root_task_id", "depth", "trace_id" FROM "tasks"."tasks" WHERE "id" = $1 OR "root_task_id" = $1 ORDER BY "depth"`,
        [root],
      )
    ).rows;

  beforeAll(async () => {
    if (tracing) useSpanExporterForTests(exporter);
    sink = await WebhookSink.start();
    relay = await RelayHarness.start({ env: { RELAY_WEBHOOK_ALLOW_PRIVATE: 'true', RELAY_UPSTREAM_POLL_MIN_MS: '100', RELAY_UPSTREAM_POLL_MAX_MS: '1000' } });
    org = `traces${randomUUID().slice(0, 6)}`;
    db = new PgClient({ connectionString: testDatabaseUrl() });
    await db.connect();
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((upstream) => upstream.close()));
    await db?.end();
    await relay?.stop();
    await sink?.stop();
    if (tracing) useSpanExporterForTests(null);
  });

  it('links A → B → C → D by the traceparent the upstream agents carry on, one trace from the first call to the last agent', async () => {
    const alice = await registerAgent(relay, { handle: `alice@${org}`, name: 'alice' });
    const dave = await registerAgent(relay, { handle: `dave@${org}`, name: 'dave', notification_webhook_url: sink.url('/dave') });
    const bobAgent = await startTracedUpstreamAgent('upstream-bob', exporter);
    const carolAgent = await startTracedUpstreamAgent('upstream-carol', exporter);
    upstreams.push(bobAgent, carolAgent);
    const bob = await registerUpstream('bob', bobAgent);
    const carol = await registerUpstream('carol', carolAgent);
    bobAgent.handOnTo({ relayUrl: relay.url, recipient: carol.agent.handle, apiKey: bob.api_key });
    carolAgent.handOnTo({ relayUrl: relay.url, recipient: dave.agent.handle, apiKey: carol.api_key });

    const aliceToBob = await senderClient(relay, alice, bob.agent.handle);
    const root = (await aliceToBob.sendMessage({
      tenant: '',
      message: userMessage('ship the release'),
      configuration: nonBlocking,
      metadata: undefined,
    })) as Task;

    // Bob hands on to Carol, Carol to Dave, each naming nothing but the trace it was handed.
    const rows = await eventually(async () => {
      const found = await chainRows(root.id);
      expect(found.map((row) => row.sender_handle)).toEqual([alice.agent.handle, bob.agent.handle, carol.agent.handle]);
      return found;
    }, 60_000);
    expect(rows.map((row) => [row.parent_task_id, row.root_task_id, row.depth])).toEqual([
      [null, null, 0],
      [root.id, root.id, 1],
      [rows[1].id, root.id, 2],
    ]);
    // Each agent hears its hand-on answered after the relay stored it.
    await eventually(() => {
      expect(bobAgent.handedOn).toEqual([rows[1].id]);
      expect(carolAgent.handedOn).toEqual([rows[2].id]);
    }, 30_000);
    // The chain keeps its root's trace id.
    const traceId = rows[0].trace_id;
    expect(rows.map((row) => row.trace_id)).toEqual([traceId, traceId, traceId]);
    // Reads name the parent: Bob's handoff to Carol, read by Bob with the official client.
    const bobToCarol = await senderClient(relay, bob, carol.agent.handle);
    const read = await bobToCarol.getTask({ tenant: '', id: rows[1].id, historyLength: 0 });
    expect((read.metadata as Json).relay.chain).toEqual({ parentTaskId: root.id, rootTaskId: root.id, depth: 1 });

    // Every delivery carried a traceparent of that trace: the upstream SendMessages, and Dave's webhook.
    for (const received of [...bobAgent.receivedTraceParents, ...carolAgent.receivedTraceParents])
      expect(received).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const daveHook = await eventually(() => {
      const hooks = sink.requests.filter((hook) => hook.path === '/dave' && hook.body.includes(rows[2].id));
      expect(hooks.length).toBeGreaterThan(0);
      return hooks[0];
    }, 30_000);
    expect(daveHook.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));

    // The agents' spans are in that trace; with the relay exporting, so are the relay's: each
    // agent's server span continues a delivery attempt, each call it makes continues in the edge.
    // (The relay's polls of the upstream tasks, GetTask, carry no trace context: the agents trace them apart.)
    const agentSpans = await eventually(() => {
      const spans = exporter
        .getFinishedSpans()
        .filter((span) => serviceOf(span).startsWith('upstream-') && (span.kind === SpanKind.CLIENT || span.parentSpanContext !== undefined));
      expect(spans.filter((span) => span.name === 'hand on')).toHaveLength(2);
      expect(spans.filter((span) => span.kind === SpanKind.SERVER).length).toBeGreaterThanOrEqual(2);
      return spans;
    }, 30_000);
    expect(new Set(agentSpans.map(traceOf))).toEqual(new Set([traceId]));
    if (!tracing) {
      expect(exporter.getFinishedSpans().filter((span) => serviceOf(span).startsWith('agentrelay-'))).toEqual([]);
      return;
    }
    const relaySpans = await eventually(() => {
      const spans = exporter.getFinishedSpans().filter((span) => serviceOf(span).startsWith('agentrelay-') && traceOf(span) === traceId);
      expect(spans.filter((span) => span.name === 'deliver upstream').length).toBeGreaterThanOrEqual(2);
      expect(spans.filter((span) => span.name === 'deliver webhook').length).toBeGreaterThan(0);
      return spans;
    }, 30_000);
    const byId = new Map([...relaySpans, ...agentSpans].map((span) => [span.spanContext().spanId, span]));
    const parentOf = (span: ReadableSpan): ReadableSpan | undefined => byId.get(span.parentSpanContext?.spanId ?? '');
    for (const server of agentSpans.filter((span) => span.kind === SpanKind.SERVER)) expect(parentOf(server)?.name).toMatch(/^deliver upstream$/);
    for (const handOn of agentSpans.filter((span) => span.name === 'hand on')) {
      const edgeSpans = relaySpans.filter((span) => serviceOf(span) === 'agentrelay-edge' && span.parentSpanContext?.spanId === handOn.spanContext().spanId);
      expect(edgeSpans.map((span) => span.name)).toEqual([expect.stringMatching(/^POST \/a2a\//)]);
    }
    // The first call, Alice's, is the trace's root.
    const rootSpans = relaySpans.filter((span) => span.parentSpanContext === undefined);
    expect(rootSpans.map((span) => `${serviceOf(span)} ${span.kind}`)).toEqual([`agentrelay-edge ${SpanKind.SERVER}`]);
  }, 120_000);

  it('links the same chain A → B → C → D by the referenceTaskIds the upstream agents name, with no trace context on their calls', async () => {
    const suffix = randomUUID().slice(0, 4);
    const alice = await registerAgent(relay, { handle: `alice-${suffix}@${org}`, name: 'alice' });
    const dave = await registerAgent(relay, { handle: `dave-${suffix}@${org}`, name: 'dave' });
    const bobAgent = await startTracedUpstreamAgent('upstream-bob-ref', exporter);
    const carolAgent = await startTracedUpstreamAgent('upstream-carol-ref', exporter);
    upstreams.push(bobAgent, carolAgent);
    const bob = await registerUpstream(`bob-${suffix}`, bobAgent);
    const carol = await registerUpstream(`carol-${suffix}`, carolAgent);
    bobAgent.handOnTo({ relayUrl: relay.url, recipient: carol.agent.handle, apiKey: bob.api_key, link: 'reference' });
    carolAgent.handOnTo({ relayUrl: relay.url, recipient: dave.agent.handle, apiKey: carol.api_key, link: 'reference' });

    const aliceToBob = await senderClient(relay, alice, bob.agent.handle);
    const root = (await aliceToBob.sendMessage({
      tenant: '',
      message: userMessage('ship the release'),
      configuration: nonBlocking,
      metadata: undefined,
    })) as Task;

    const rows = await eventually(async () => {
      const found = await chainRows(root.id);
      expect(found.map((row) => row.sender_handle)).toEqual([alice.agent.handle, bob.agent.handle, carol.agent.handle]);
      return found;
    }, 60_000);
    expect(rows.map((row) => [row.parent_task_id, row.root_task_id, row.depth])).toEqual([
      [null, null, 0],
      [root.id, root.id, 1],
      [rows[1].id, root.id, 2],
    ]);
    // Each agent hears its hand-on answered after the relay stored it.
    await eventually(() => {
      expect(bobAgent.handedOn).toEqual([rows[1].id]);
      expect(carolAgent.handedOn).toEqual([rows[2].id]);
    }, 30_000);
    // Named parents carry the chain's trace on even though the agents' calls carried none.
    expect(new Set(rows.map((row) => row.trace_id)).size).toBe(1);
  }, 120_000);

  it('links only to a handoff the caller took part in, makes one agent’s handoffs in a trace siblings, lets a named parent win, and refuses a loop found by trace', async () => {
    const [erin, frank, grace] = await Promise.all(
      ['erin', 'frank', 'grace'].map((name) => registerAgent(relay, { handle: `${name}-${randomUUID().slice(0, 4)}@${org}`, name })),
    );
    const send = (sender: RegisteredTestAgent, recipient: RegisteredTestAgent, traceparent: string, params: Json = {}) =>
      rpc(
        relay.url,
        sender.api_key,
        'message/send',
        {
          message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: 'from the trace' }], ...params },
          configuration: { blocking: false },
        },
        { path: `/a2a/${recipient.agent.handle}`, headers: { traceparent } },
      );
    const traceparent = `00-${randomUUID().replace(/-/g, '')}-00f067aa0ba902b7-01`;
    // Erin's root handoff to Frank, made in that trace, keeps it.
    const first = await send(erin, frank, traceparent);
    const rootId = (first.body.result as Json).id as string;
    expect((first.body.result as Json).metadata.relay.chain).toEqual({ parentTaskId: null, rootTaskId: rootId, depth: 0 });
    // Frank, its recipient, calls in the same trace: his handoff serves Erin's.
    const onward = await send(frank, grace, traceparent);
    expect((onward.body.result as Json).metadata.relay.chain).toEqual({ parentTaskId: rootId, rootTaskId: rootId, depth: 1 });
    // The AgentRelay dialect and the HTTP+JSON binding link by the header as well: Grace asks Heidi, Heidi asks Ivan.
    const [heidi, ivan] = await Promise.all(
      ['heidi', 'ivan'].map((name) => registerAgent(relay, { handle: `${name}-${randomUUID().slice(0, 4)}@${org}`, name })),
    );
    const relayDialect = await rpc(
      relay.url,
      grace.api_key,
      'message/send',
      { recipient: heidi.agent.handle, message: { role: 'user', parts: [{ type: 'text', text: 'check it' }] } },
      { headers: { traceparent } },
    );
    expect((relayDialect.body.result as Json).chain).toEqual({ parent_task_id: (onward.body.result as Json).id, root_task_id: rootId, depth: 2 });
    const rest = await request(relay.url)
      .post(`/a2a/${ivan.agent.handle}/message:send`)
      .set('authorization', `Bearer ${heidi.api_key}`)
      .set('a2a-version', '1.0')
      .set('traceparent', traceparent)
      .send({ message: { messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text: 'and the tests' }] }, configuration: { returnImmediately: true } })
      .expect(200);
    expect(rest.body.task.metadata.relay.chain).toEqual({ parentTaskId: (relayDialect.body.result as Json).task_id, rootTaskId: rootId, depth: 3 });
    // Grace's CLI names the handoff it serves.
    let shown = '';
    const io = { stdout: (text: string) => void (shown += text), stderr: (text: string) => void (shown += text) };
    const code = await run(['show', (onward.body.result as Json).id as string], { RELAY_URL: relay.url, AGENTRELAY_API_KEY: grace.api_key }, io);
    expect({ code, shown }).toEqual({ code: EXIT.ok, shown: expect.stringContaining(`For handoff ${rootId}, depth 1 of the chain started by ${rootId}`) });
    // Grace, who received only Frank's, hands back to Frank in that trace: the loop is refused, nothing stored.
    const before = Number((await db.query(`SELECT count(*) FROM "tasks"."tasks" WHERE "sender_id" = $1`, [grace.agent.id])).rows[0].count);
    const loop = await send(grace, frank, traceparent);
    expect(loop.body.error).toMatchObject({
      code: -32041,
      data: { reason: 'chain_cycle', path: [erin.agent.handle, frank.agent.handle, grace.agent.handle, frank.agent.handle] },
    });
    expect(Number((await db.query(`SELECT count(*) FROM "tasks"."tasks" WHERE "sender_id" = $1`, [grace.agent.id])).rows[0].count)).toBe(before);
    // An agent that took no part in the trace's handoffs links to none of them.
    const stranger = await registerAgent(relay, { handle: `stranger-${randomUUID().slice(0, 4)}@${org}`, name: 'stranger' });
    const unlinked = await send(stranger, grace, traceparent);
    expect((unlinked.body.result as Json).metadata.relay.chain).toMatchObject({ parentTaskId: null, depth: 0 });
    // An agent's successive handoffs in a trace it received nothing in are siblings under its first, not a line.
    const batch = `00-${randomUUID().replace(/-/g, '')}-00f067aa0ba902b7-01`;
    const chains: Json[] = [];
    for (const recipient of [erin, grace, stranger]) chains.push(((await send(frank, recipient, batch)).body.result as Json).metadata.relay.chain as Json);
    const batchRoot = chains[0].rootTaskId as string;
    expect(chains).toEqual([
      { parentTaskId: null, rootTaskId: batchRoot, depth: 0 },
      { parentTaskId: batchRoot, rootTaskId: batchRoot, depth: 1 },
      { parentTaskId: batchRoot, rootTaskId: batchRoot, depth: 1 },
    ]);
    // A parent named on the message wins over the trace.
    const own = (await send(frank, stranger, `00-${randomUUID().replace(/-/g, '')}-00f067aa0ba902b7-01`)).body.result as Json;
    const named = await send(frank, erin, traceparent, { referenceTaskIds: [own.id] });
    expect((named.body.result as Json).metadata.relay.chain).toEqual({ parentTaskId: own.id, rootTaskId: own.id, depth: 1 });
  }, 60_000);
});
