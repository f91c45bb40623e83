import { TASK_LIMITS } from '@app/contracts';
import { registerAgent, uniqueHandle, type RegisteredTestAgent } from './support/agents';
import { eventually } from './support/eventually';
import { ok, rpc, type Json } from './support/json-rpc';
import { RelayHarness } from './support/relay-harness';

/**
 * Search slots are shared per caller: an agent that keeps two searches running (each ranking
 * about 600 KB of its own messages again) is at its own limit, and another agent's searches, made
 * meanwhile, are answered as they are alone (measured first, in the same run).
 */
describe('tasks/search slots per caller', () => {
  let relay: RelayHarness;
  let hog: RegisteredTestAgent;
  let hogPeer: RegisteredTestAgent;
  let other: RegisteredTestAgent;
  let otherTaskId: string;
  const tag = Math.random().toString(36).slice(2, 7);
  const hogWord = `narwhal${tag}`;
  const otherWord = `quokka${tag}`;
  const HOG_MESSAGES = 6;

  /** One text part of about 99,000 characters of distinct short words, `hogWord` first. */
  function largePart(message: number): Array<{ type: 'text'; text: string }> {
    const words = [hogWord];
    for (let length = 0, index = 0; length < TASK_LIMITS.textPartChars - 1000; index += 1) {
      const word = `m${message.toString(36)}w${index.toString(36)}`;
      words.push(word);
      length += word.length + 1;
    }
    return [{ type: 'text', text: words.join(' ') }];
  }

  beforeAll(async () => {
    relay = await RelayHarness.start();
    hog = await registerAgent(relay, { handle: uniqueHandle('hog', 'search'), name: 'Hog' });
    hogPeer = await registerAgent(relay, { handle: uniqueHandle('peer', 'search'), name: 'Peer' });
    other = await registerAgent(relay, { handle: uniqueHandle('other', 'search'), name: 'Other' });
    // Matching messages of ~99,000 characters: a search of the hog ranks each of them again.
    for (let message = 0; message < HOG_MESSAGES; message += 1)
      await ok(relay.url, hog.api_key, 'message/send', { recipient: hogPeer.agent.handle, message: { role: 'user', parts: largePart(message) } });
    const sent = await ok(relay.url, other.api_key, 'message/send', {
      recipient: hogPeer.agent.handle,
      message: { role: 'user', parts: [{ type: 'text', text: `a short note about the ${otherWord}` }] },
    });
    otherTaskId = sent.task_id as string;
  }, 180_000);

  afterAll(async () => {
    await relay?.stop();
  });

  /** A search's outcome: `found` with the hits' task ids, or the refusal's reason. */
  const search = async (agent: RegisteredTestAgent, query: string): Promise<{ found?: string[]; refused?: string }> => {
    const response = await rpc(relay.url, agent.api_key, 'tasks/search', { query });
    if (response.body.error) return { refused: String((response.body.error.data as Json | undefined)?.reason ?? response.body.error.message) };
    return { found: (response.body.result?.items as Json[]).map((item) => item.task_id as string) };
  };

  it("answers another agent's searches while one agent keeps two running, as it answers them alone", async () => {
    const alone: Array<{ found?: string[]; refused?: string }> = [];
    for (let made = 0; made < 3; made += 1) alone.push(await search(other, otherWord));
    expect(alone).toEqual(Array(3).fill({ found: [otherTaskId] }));

    let hogging = true;
    const hogOutcomes: Array<{ found?: string[]; refused?: string }> = [];
    const keepSearching = async (): Promise<void> => {
      while (hogging) hogOutcomes.push(await search(hog, hogWord));
    };
    const hogs = [keepSearching(), keepSearching()];
    try {
      // The hog is at its own limit: a third search of its own is refused.
      const third = await eventually(async () => {
        const outcome = await search(hog, hogWord);
        return outcome.refused ? outcome : false;
      }, 60_000);
      expect(third.refused).toBe('overloaded');

      const beside: Array<{ found?: string[]; refused?: string }> = [];
      for (let made = 0; made < 6; made += 1) beside.push(await search(other, otherWord));
      expect(beside).toEqual(Array(6).fill({ found: [otherTaskId] }));
    } finally {
      hogging = false;
      await Promise.all(hogs);
    }
    // The hog's own two were answered (each finds its tasks).
    expect(hogOutcomes.filter((outcome) => outcome.found?.length === HOG_MESSAGES).length).toBeGreaterThan(0);
    expect(hogOutcomes.filter((outcome) => !outcome.found)).toEqual([]);
  });
});
