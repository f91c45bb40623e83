import type { DataSource } from 'typeorm';
import type { PushConfigEvent, PushTargetReply } from '@app/contracts';
import type { NatsRpcClient } from '@app/messaging';
import { generateNotifierSealingKeyPair, generateSecretKeyEntry, NotifierSealer, NotifierUnsealer, SecretCipher } from '@app/secrets';
import { PushTargetsService } from './push-targets.service';

const TASK = 'task-1';

function event(owner: string, configId: string, at: string, deleted = false): PushConfigEvent {
  return {
    event_id: `${owner}-${configId}-${at}`,
    task_id: TASK,
    config_id: configId,
    owner,
    version: '1.0',
    url: deleted ? null : 'https://hooks.example.com/a2a',
    deleted,
    occurred_at: at,
  };
}

interface PlainReply {
  token: string;
  credentials: string;
}

function reply(token: string, credentials: string): PlainReply {
  return { token, credentials };
}

const notifierKeys = generateNotifierSealingKeyPair('current');
const sealer = new NotifierSealer(notifierKeys.publicKey);

/** What the tasks service answers: the token and credentials sealed to the notifier's key. */
async function sealedReply({ token, credentials }: PlainReply): Promise<PushTargetReply> {
  return {
    target: {
      version: '1.0',
      url: `https://hooks.example.com/${token}`,
      sealed_token: await sealer.seal(token),
      authentication: { schemes: ['Bearer'], sealed_credentials: await sealer.seal(credentials) },
    },
  };
}

describe('PushTargetsService', () => {
  const key = generateSecretKeyEntry('current');
  let cipher: SecretCipher;
  let queries: Array<{ sql: string; params: unknown[] }>;
  let storedRows: unknown[];
  let replies: Map<string, PlainReply | Error>;
  let fetched: string[];
  let inFlight: number;
  let mostInFlight: number;
  let service: PushTargetsService;

  beforeEach(() => {
    cipher = SecretCipher.fromConfig(key);
    queries = [];
    storedRows = [];
    replies = new Map();
    fetched = [];
    inFlight = 0;
    mostInFlight = 0;
    const dataSource = {
      query: async (sql: string, params: unknown[] = []) => {
        queries.push({ sql, params });
        return sql.trimStart().startsWith('SELECT') ? storedRows : [];
      },
    } as unknown as DataSource;
    const rpc = {
      request: async (_subject: string, request: { owner: string; config_id: string }) => {
        fetched.push(`${request.owner}/${request.config_id}`);
        inFlight += 1;
        mostInFlight = Math.max(mostInFlight, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        const answer = replies.get(`${request.owner}/${request.config_id}`);
        if (answer instanceof Error) throw answer;
        return answer ? sealedReply(answer) : { target: null };
      },
    } as unknown as NatsRpcClient;
    service = new PushTargetsService(dataSource, rpc, cipher, new NotifierUnsealer(notifierKeys.sealingKey));
  });

  it('keeps the configs of two owners with the same id apart, and deleting one leaves the other', async () => {
    replies.set('alice/same', reply('alice-token', 'alice-credentials'));
    replies.set('bob/same', reply('bob-token', 'bob-credentials'));
    await service.apply(event('alice', 'same', '2026-01-01T00:00:01.000Z'));
    await service.apply(event('bob', 'same', '2026-01-01T00:00:02.000Z'));

    expect(service.ofTask(TASK).map((target) => [target.owner_handle, target.token, target.auth_credentials])).toEqual([
      ['alice', 'alice-token', 'alice-credentials'],
      ['bob', 'bob-token', 'bob-credentials'],
    ]);

    await service.apply(event('alice', 'same', '2026-01-01T00:00:03.000Z', true));
    expect(service.ofTask(TASK).map((target) => target.owner_handle)).toEqual(['bob']);
  });

  it('stores the token and credentials sealed, never in clear', async () => {
    replies.set('alice/c1', reply('alice-token', 'alice-credentials'));
    await service.apply(event('alice', 'c1', '2026-01-01T00:00:01.000Z'));

    const insert = queries.find((query) => query.sql.includes('INSERT INTO "notifier"."push_targets"'));
    expect(insert).toBeDefined();
    expect(insert!.params).not.toContain('alice-token');
    expect(insert!.params).not.toContain('alice-credentials');
    expect(cipher.open(insert!.params[5] as string)).toBe('alice-token');
    expect(cipher.open(insert!.params[7] as string)).toBe('alice-credentials');
  });

  it('skips a config sealed with a key no longer listed, and still returns the others', async () => {
    const retired = SecretCipher.fromConfig(generateSecretKeyEntry('retired'));
    storedRows = [
      {
        task_id: TASK,
        config_id: 'old',
        owner_handle: 'alice',
        version: '1.0',
        url: 'https://a.example.com',
        token: retired.seal('t'),
        auth_scheme: null,
        auth_credentials: null,
        occurred_at: new Date(1000),
        created_at: new Date(1000),
      },
      {
        task_id: TASK,
        config_id: 'new',
        owner_handle: 'bob',
        version: '1.0',
        url: 'https://b.example.com',
        token: cipher.seal('bob-token'),
        auth_scheme: null,
        auth_credentials: null,
        occurred_at: new Date(2000),
        created_at: new Date(2000),
      },
    ];
    await service.onModuleInit();

    expect(service.ofTask(TASK).map((target) => [target.config_id, target.token])).toEqual([['new', 'bob-token']]);
  });

  it('follows a config from the feed by asking the tasks service, and uses the stored copy when it does not answer', async () => {
    replies.set('alice/c1', reply('alice-token', 'alice-credentials'));
    await service.rememberEvent(event('alice', 'c1', '2026-01-01T00:00:01.000Z'));
    expect(service.ofTask(TASK).map((target) => target.token)).toEqual(['alice-token']);

    replies.set('bob/c2', new Error('no responders'));
    storedRows = [
      {
        task_id: TASK,
        config_id: 'c2',
        owner_handle: 'bob',
        version: '0.3',
        url: 'https://b.example.com',
        token: cipher.seal('bob-token'),
        auth_scheme: null,
        auth_credentials: null,
        occurred_at: new Date('2026-01-01T00:00:02.000Z'),
        created_at: new Date(),
      },
    ];
    await service.rememberEvent(event('bob', 'c2', '2026-01-01T00:00:02.000Z'));
    expect(service.ofTask(TASK).map((target) => [target.owner_handle, target.token])).toEqual([
      ['alice', 'alice-token'],
      ['bob', 'bob-token'],
    ]);
  });

  it("applies a run of feed events as one by one would, fetching only each config's last event, several at once", async () => {
    for (const id of ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10']) replies.set(`alice/${id}`, reply(`token-${id}`, `credentials-${id}`));
    const run = [
      event('alice', 'c1', '2026-01-01T00:00:01.000Z'),
      event('alice', 'c2', '2026-01-01T00:00:02.000Z'),
      event('alice', 'c1', '2026-01-01T00:00:03.000Z', true),
      event('alice', 'c2', '2026-01-01T00:00:04.000Z'),
      ...['c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9', 'c10'].map((id, index) => event('alice', id, `2026-01-01T00:00:1${index}.000Z`)),
    ];
    await service.rememberEvents(run);

    // c1 was deleted last: not fetched, not held. c2 once, for its newer event.
    expect(fetched.filter((name) => name === 'alice/c1')).toEqual([]);
    expect(fetched.filter((name) => name === 'alice/c2')).toEqual(['alice/c2']);
    expect(fetched).toHaveLength(9);
    expect(mostInFlight).toBeGreaterThan(1);
    expect(mostInFlight).toBeLessThanOrEqual(8);
    expect(
      service
        .ofTask(TASK)
        .map((target) => target.config_id)
        .sort(),
    ).toEqual(['c10', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7', 'c8', 'c9']);
  });
});
