import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AGENT_UPDATED_EVENT_SUBJECT, DIRECTORY_SUBJECTS, prefixedSubject, RelayError, type AgentUpdatedEvent } from '@app/contracts';
import { eventStreamName, NatsRpcClient, openJetStream } from '@app/messaging';
import { eventually } from './support/eventually';
import { testNatsUrl } from './support/test-env';
import { registerAgent, setTrust, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

describe('directory: agents, keys and admission over NATS and Postgres', () => {
  let relay: RelayHarness;
  let rpc: NatsRpcClient;
  let db: DataSource;

  beforeAll(async () => {
    relay = await RelayHarness.start();
    rpc = relay.edge.get(NatsRpcClient);
    db = await new DataSource({ type: 'postgres', url: testDatabaseUrl() }).initialize();
  });

  afterAll(async () => {
    await db?.destroy();
    await relay?.stop();
  });

  it('registers an agent and authenticates its key', async () => {
    const handle = uniqueHandle('bob', 'acme');
    const registered = await registerAgent(relay, { handle, name: 'Bob', role: 'backend', skills: ['python', 'api'] });
    expect(registered.api_key).toMatch(/^ah_live_[A-Z2-7]{32}$/);
    expect(registered.agent).toMatchObject({ handle, name: 'Bob', role: 'backend', skills: ['python', 'api'], disabled: false });
    const identity = await rpc.request(DIRECTORY_SUBJECTS.authenticate, { api_key: registered.api_key });
    expect(identity).toEqual({ id: registered.agent.id, handle, name: 'Bob', role: 'backend', org: 'acme' });
  });

  it('stores keys only as SHA-256 hashes with a display prefix', async () => {
    const registered = await registerAgent(relay, { handle: uniqueHandle('hash', 'acme'), name: 'Hash' });
    const rows: Array<Record<string, unknown>> = await db.query(`SELECT * FROM "directory"."api_keys" WHERE "agent_id" = $1`, [registered.agent.id]);
    expect(rows).toHaveLength(1);
    const serialized = JSON.stringify(rows);
    expect(serialized).not.toContain(registered.api_key);
    expect(serialized).not.toContain(registered.api_key.slice(16));
    const { createHash } = await import('node:crypto');
    expect(rows[0].key_hash).toBe(createHash('sha256').update(registered.api_key).digest('hex'));
    expect(rows[0].prefix).toBe(registered.api_key.slice(0, 16));
    await expect(db.query(`SELECT 1 FROM "directory"."agents" WHERE "handle" = 'Bad Handle'`)).resolves.toEqual([]);
  });

  it('refuses malformed, unknown and revoked keys with unauthenticated', async () => {
    const registered = await registerAgent(relay, { handle: uniqueHandle('carl', 'acme'), name: 'Carl' });
    for (const key of ['', 'nope', TEST_ADMIN_TOKEN, `ah_live_${'A'.repeat(32)}`, registered.api_key.toLowerCase()]) {
      await expect(rpc.request(DIRECTORY_SUBJECTS.authenticate, { api_key: key })).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
    await request(relay.url).delete(`/admin/agents/${registered.agent.handle}/keys/${registered.key.prefix}`).set(admin).expect(200);
    await expect(rpc.request(DIRECTORY_SUBJECTS.authenticate, { api_key: registered.api_key })).rejects.toBeInstanceOf(RelayError);
  });

  it('enforces the handle format and uniqueness in the database too', async () => {
    const registered = await registerAgent(relay, { handle: uniqueHandle('dup', 'acme'), name: 'Dup' });
    await expect(db.query(`INSERT INTO "directory"."agents" ("handle", "name") VALUES ($1, 'Again')`, [registered.agent.handle])).rejects.toThrow(
      /agents_handle_key/,
    );
    await expect(db.query(`INSERT INTO "directory"."agents" ("handle", "name") VALUES ('Not A Handle', 'X')`)).rejects.toThrow(/agents_handle_format/);
    await expect(
      db.query(`INSERT INTO "directory"."api_keys" ("agent_id", "key_hash", "prefix") VALUES ($1, 'plain-text-key', 'ah_live_AAAAAAAA')`, [
        registered.agent.id,
      ]),
    ).rejects.toThrow(/api_keys_hash_format/);
  });

  it('publishes relay.events.agent.updated to JetStream after create, update and disable, with Nats-Msg-Id = event_id', async () => {
    const jetStream = await openJetStream({ url: testNatsUrl(), name: 'directory-events-test' });
    const subject = prefixedSubject(relay.subjectPrefix, AGENT_UPDATED_EVENT_SUBJECT);
    const lastEvent = async (): Promise<{ event: AgentUpdatedEvent; msgId: string | undefined }> => {
      const stored = await jetStream.jsm.streams.getMessage(eventStreamName(relay.subjectPrefix), { last_by_subj: subject });
      if (!stored) throw new Error('no agent event yet');
      return { event: stored.json<AgentUpdatedEvent>(), msgId: stored.header?.get('Nats-Msg-Id') };
    };
    try {
      const handle = uniqueHandle('evan', 'acme');
      const registered = await registerAgent(relay, { handle, name: 'Evan', notification_webhook_url: 'http://127.0.0.1:9/evan', email: 'evan@example.com' });
      const created = await eventually(async () => {
        const last = await lastEvent();
        expect(last.event.handle).toBe(handle);
        return last;
      });
      expect(created.event).toEqual({
        event_id: expect.any(String),
        agent_id: registered.agent.id,
        handle,
        name: 'Evan',
        notification_webhook_url: 'http://127.0.0.1:9/evan',
        slack_webhook_url: null,
        webhook_timeout_ms: null,
        upstream: null,
        disabled: false,
        occurred_at: expect.any(String),
      });
      expect(created.msgId).toBe(created.event.event_id);
      expect(JSON.stringify(created.event)).not.toContain('evan@example.com');

      await request(relay.url).patch(`/admin/agents/${handle}`).set(admin).send({ slack_webhook_url: 'https://hooks.slack.example/T/B/evan' }).expect(200);
      const updated = await eventually(async () => {
        const last = await lastEvent();
        expect(last.event).toMatchObject({ handle, slack_webhook_url: expect.any(String) });
        return last;
      });
      expect(updated.event).toMatchObject({ handle, slack_webhook_url: 'https://hooks.slack.example/T/B/evan', disabled: false });
      expect(updated.event.event_id).not.toBe(created.event.event_id);

      await request(relay.url).delete(`/admin/agents/${handle}`).set(admin).expect(200);
      await eventually(async () => expect((await lastEvent()).event).toMatchObject({ handle, disabled: true }));
      const rows: Array<{ published_at: Date | null }> = await db.query(
        `SELECT "published_at" FROM "directory"."outbox_events" WHERE "payload"->>'handle' = $1`,
        [handle],
      );
      expect(rows).toHaveLength(3);
      expect(rows.every((row) => row.published_at !== null)).toBe(true);

      // An event left unpublished (say the process died after the commit) is relayed by the sweep.
      const leftBehind = { ...updated.event, event_id: randomUUID(), name: 'Left behind' };
      await db.query(`INSERT INTO "directory"."outbox_events" ("id", "subject", "payload") VALUES ($1, $2, $3)`, [
        leftBehind.event_id,
        AGENT_UPDATED_EVENT_SUBJECT,
        JSON.stringify(leftBehind),
      ]);
      // The sweep runs every 10 s: allow it a few rounds on a loaded machine.
      const swept = await eventually(async () => {
        const last = await lastEvent();
        expect(last.event.event_id).toBe(leftBehind.event_id);
        return last;
      }, 40_000);
      expect(swept.msgId).toBe(leftBehind.event_id);
    } finally {
      await jetStream.connection.drain();
    }
  });

  describe('admission', () => {
    let frank: string;
    let bob: string;
    let mallory: string;
    let carol: string;
    let dave: string;

    beforeAll(async () => {
      const org = `acme${Math.random().toString(36).slice(2, 6)}`;
      const partner = `partner${Math.random().toString(36).slice(2, 6)}`;
      frank = (await registerAgent(relay, { handle: `frank@${org}`, name: 'Frank' })).agent.handle;
      bob = (await registerAgent(relay, { handle: `bob@${org}`, name: 'Bob' })).agent.handle;
      mallory = (await registerAgent(relay, { handle: `mallory@${org}`, name: 'Mallory' })).agent.handle;
      carol = (await registerAgent(relay, { handle: `carol@${partner}`, name: 'Carol' })).agent.handle;
      dave = (await registerAgent(relay, { handle: `dave@${partner}`, name: 'Dave' })).agent.handle;
    });

    const admit = (sender: string, recipient: string) => rpc.request(DIRECTORY_SUBJECTS.admit, { sender, recipient });

    it('admits a teammate by default and returns the public profile', async () => {
      const reply = await admit(bob, frank);
      expect(reply.recipient).toMatchObject({ handle: frank, name: 'Frank', org: frank.split('@')[1] });
      expect(reply.recipient).not.toHaveProperty('email');
    });

    it('refuses another org unless allowed', async () => {
      await expect(admit(carol, frank)).rejects.toMatchObject({ reason: 'teammate_blocked', data: { policy: 'not_allowed' } });
      await setTrust(relay, frank, { allow: [carol] });
      await expect(admit(carol, frank)).resolves.toMatchObject({ recipient: { handle: frank } });
      await expect(admit(dave, frank)).rejects.toMatchObject({ reason: 'teammate_blocked', data: { policy: 'not_allowed' } });
      await setTrust(relay, frank, { allow: [`*@${carol.split('@')[1]}`] });
      await expect(admit(dave, frank)).resolves.toMatchObject({ recipient: { handle: frank } });
    });

    it('refuses a blocked teammate, and block beats allow', async () => {
      await setTrust(relay, frank, { allow: [`*@${carol.split('@')[1]}`, mallory], block: [mallory, dave] });
      await expect(admit(mallory, frank)).rejects.toMatchObject({ reason: 'teammate_blocked', data: { policy: 'blocked' } });
      await expect(admit(dave, frank)).rejects.toMatchObject({ reason: 'teammate_blocked', data: { policy: 'blocked' } });
      await expect(admit(carol, frank)).resolves.toMatchObject({ recipient: { handle: frank } });
      await expect(admit(bob, frank)).resolves.toMatchObject({ recipient: { handle: frank } });
    });

    it('answers recipient_not_found for an unknown or disabled recipient', async () => {
      await expect(admit(bob, `nobody@${frank.split('@')[1]}`)).rejects.toMatchObject({ reason: 'recipient_not_found' });
      const gone = await registerAgent(relay, { handle: uniqueHandle('gone', frank.split('@')[1]), name: 'Gone' });
      await expect(admit(bob, gone.agent.handle)).resolves.toBeDefined();
      await request(relay.url).delete(`/admin/agents/${gone.agent.handle}`).set(admin).expect(200);
      await expect(admit(bob, gone.agent.handle)).rejects.toMatchObject({ reason: 'recipient_not_found' });
    });
  });
});
