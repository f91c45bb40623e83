import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { AGENT_UPDATED_EVENT_SUBJECT, prefixedSubject, type AgentUpdatedEvent } from '@app/contracts';
import { openJetStream, publishWithMsgId, type JetStreamContext } from '@app/messaging';
import { TEST_ADMIN_TOKEN, type RelayHarness } from './relay-harness';
import type { SinkRequest, WebhookSink } from './webhook-sink';
import { testNatsUrl } from './test-env';

export interface TestAgent {
  agentId: string;
  handle: string;
  webhookSecret: string;
}

/** A handle no other test of this run uses. */
export function uniqueHandle(name: string): string {
  return `${name}-${randomBytes(3).toString('hex')}@acme`;
}

/**
 * Agents for notifier tests: registers them through the admin API, and publishes
 * `relay.events.agent.updated` events of the tests' own making (later changes, late events).
 */
export class AgentEvents {
  private constructor(
    private readonly relay: RelayHarness,
    private readonly jetStream: JetStreamContext,
  ) {}

  static async open(relay: RelayHarness): Promise<AgentEvents> {
    return new AgentEvents(relay, await openJetStream({ url: testNatsUrl(), name: 'test-agent-events' }));
  }

  async publish(agent: Omit<AgentUpdatedEvent, 'event_id' | 'occurred_at' | 'name' | 'disabled'> & Partial<AgentUpdatedEvent>): Promise<AgentUpdatedEvent> {
    const event: AgentUpdatedEvent = {
      event_id: randomUUID(),
      name: agent.handle.split('@')[0],
      disabled: false,
      occurred_at: new Date().toISOString(),
      ...agent,
    };
    await publishWithMsgId(this.jetStream.js, prefixedSubject(this.relay.subjectPrefix, AGENT_UPDATED_EVENT_SUBJECT), event, event.event_id);
    return event;
  }

  /**
   * Registers an agent through the admin API (the directory publishes its agent event; the
   * notifier keeps its webhook secret). A URL the admin API refuses (e.g. an IPv6 literal, for the
   * SSRF tests) reaches the notifier through an agent event of its own instead.
   */
  async register(handle: string, targets: { webhook?: string | null; slack?: string | null }): Promise<TestAgent> {
    const body = { handle, name: handle.split('@')[0], notification_webhook_url: targets.webhook ?? undefined, slack_webhook_url: targets.slack ?? undefined };
    let response = await this.admin(body);
    const viaEvent = response.status === 400;
    if (viaEvent) response = await this.admin({ handle, name: body.name });
    if (response.status !== 201) throw new Error(`registering ${handle} answered ${response.status}: ${JSON.stringify(response.body)}`);
    const registered = response.body as { agent: { id: string }; webhook_secret: string };
    if (viaEvent)
      await this.publish({
        agent_id: registered.agent.id,
        handle,
        notification_webhook_url: targets.webhook ?? null,
        slack_webhook_url: targets.slack ?? null,
      });
    return { agentId: registered.agent.id, handle, webhookSecret: registered.webhook_secret };
  }

  private async admin(body: Record<string, unknown>): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.relay.url}/admin/agents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  /** A sender without targets and a recipient whose webhook is `sink` at its own path. */
  async pair(label: string, sink: WebhookSink): Promise<{ sender: TestAgent; recipient: TestAgent; path: string }> {
    const sender = await this.register(uniqueHandle(`${label}-s`), {});
    const recipientHandle = uniqueHandle(`${label}-r`);
    const path = `/${recipientHandle}/hook`;
    const recipient = await this.register(recipientHandle, { webhook: sink.url(path) });
    return { sender, recipient, path };
  }

  async close(): Promise<void> {
    await this.jetStream.connection.drain();
  }
}

/** Verifies a Standard Webhooks request the way a receiver would. */
export function verifyStandardWebhook(request: SinkRequest, secret: string): boolean {
  const id = request.headers['webhook-id'];
  const timestamp = request.headers['webhook-timestamp'];
  const signatures = request.headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest('base64');
  return signatures.split(' ').some((signature) => signature === `v1,${expected}`);
}
