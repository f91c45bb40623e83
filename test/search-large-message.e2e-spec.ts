import { Client } from 'pg';
import { TASK_LIMITS } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { ok, type Json } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';
import { testDatabaseUrl } from './support/test-env';

/**
 * A message inside every documented limit is stored and searchable, however many distinct words it
 * holds: the search index reads a bounded prefix of a message's text (Postgres refuses a tsvector
 * over 1 MB, which about 700 KB of distinct short words already reach).
 */
describe('tasks/search over a message of ~792 KB of distinct short words', () => {
  let relay: RelayHarness;
  let alice: RegisteredTestAgent;
  let bob: RegisteredTestAgent;
  let db: Client;
  const tag = Math.random().toString(36).slice(2, 7);
  const early = `narwhal${tag}`;
  const late = `quokka${tag}`;

  /** A short first part with `early`, then eight text parts of 99,000 characters of distinct words of a few letters, `late` last. */
  function largeParts(): Array<{ type: 'text'; text: string }> {
    const partChars = TASK_LIMITS.textPartChars - 1000;
    const parts: Array<{ type: 'text'; text: string }> = [{ type: 'text', text: `The ${early} word list follows.` }];
    let word = 0;
    for (let part = 0; part < 8; part += 1) {
      const words: string[] = [];
      let length = 0;
      while (length < partChars - late.length - 12) {
        const next = `w${(word += 1).toString(36)}`;
        words.push(next);
        length += next.length + 1;
      }
      if (part === 7) words.push(late);
      parts.push({ type: 'text', text: words.join(' ') });
    }
    return parts;
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    db = new Client({ connectionString: testDatabaseUrl() });
    await db.connect();
    alice = await registerAgent(relay, { handle: uniqueHandle('alice', 'bigtext'), name: 'Alice' });
    bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'bigtext'), name: 'Bob' });
  });

  afterAll(async () => {
    await db?.end();
    await relay?.stop();
  });

  it('accepts and stores the message, and finds it by a word of its first part', async () => {
    const parts = largeParts();
    const bytes = Buffer.byteLength(JSON.stringify(parts));
    expect(bytes).toBeGreaterThan(780_000);
    expect(bytes).toBeLessThan(800_000);

    const sent = await ok(relay.url, alice.api_key, 'message/send', { recipient: bob.agent.handle, intent: 'inform', message: { role: 'user', parts } });
    const taskId = sent.task_id as string;
    const read = await ok(relay.url, bob.api_key, 'tasks/get', { task_id: taskId });
    expect(read.messages).toHaveLength(1);
    expect(read.messages[0].body).toBe(parts[0].text);
    const { rows } = await db.query(`SELECT "parts" FROM "tasks"."messages" WHERE "task_id" = $1`, [taskId]);
    expect(rows[0].parts.map((part: Json) => part.text)).toEqual(parts.map((part) => part.text));

    for (const agent of [alice, bob]) {
      const found = await ok(relay.url, agent.api_key, 'tasks/search', { query: early });
      expect(found.items.map((item: Json) => item.task_id)).toEqual([taskId]);
      expect(found.items[0].highlights).toEqual([{ source: 'message', sequence_no: 1, fragments: expect.arrayContaining([{ text: early, match: true }]) }]);
    }
    // Past the indexed prefix a word is stored but not searchable.
    expect((await ok(relay.url, bob.api_key, 'tasks/search', { query: late })).items).toEqual([]);
  });
});
