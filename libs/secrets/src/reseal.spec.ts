import { randomBytes } from 'node:crypto';
import { loadConfig } from '@app/config';
import { openJsonValues, resealColumn, resealJsonValues, sealJsonValues } from './reseal';
import { SecretCipher } from './secret-cipher';
import { IsSecretKeyList } from './secret-keys.validator';

const keyA = `a:${randomBytes(32).toString('base64')}`;
const keyB = `b:${randomBytes(32).toString('base64')}`;

class KeysConfig {
  @IsSecretKeyList()
  RELAY_SECRET_KEYS: string;
}

describe('sealed JSON values (request headers)', () => {
  it('seals each value, opens them back, and re-seals only what is not under the first key', () => {
    const cipher = SecretCipher.fromConfig(keyA);
    const sealed = sealJsonValues(cipher, { authorization: 'Bearer abc', 'x-a2a-notification-token': 'tok' });
    expect(Object.values(sealed).every((value) => value.startsWith('v1:a:'))).toBe(true);
    expect(openJsonValues(cipher, sealed)).toEqual({ authorization: 'Bearer abc', 'x-a2a-notification-token': 'tok' });
    expect(resealJsonValues(cipher, sealed)).toBeNull();
    const rotated = SecretCipher.fromConfig(`${keyB},${keyA}`);
    const moved = resealJsonValues(rotated, { ...sealed, legacy: 'clear value' }) as Record<string, string>;
    expect(Object.values(moved).every((value) => value.startsWith('v1:b:'))).toBe(true);
    expect(openJsonValues(rotated, moved)).toEqual({ authorization: 'Bearer abc', 'x-a2a-notification-token': 'tok', legacy: 'clear value' });
  });
});

describe('re-sealing a column that holds secrets beside values in clear (onlySealed)', () => {
  it('re-seals the sealed values under another key and leaves the clear ones as they are', async () => {
    const old = SecretCipher.fromConfig(keyA);
    const rows = new Map<string, string>([
      ['1', old.seal('https://hooks.slack.com/services/secret')],
      ['2', 'https://hooks.example.com/not-a-secret'],
    ]);
    // A table of rows answering the two statements resealColumn makes.
    const db = {
      query: async (sql: string, params: unknown[] = []): Promise<unknown> => {
        if (sql.startsWith('SELECT')) {
          if (params.length > 0) return [];
          const onlySealed = sql.includes(`left("url", 3) = 'v1:'`);
          return [...rows].filter(([, value]) => !value.startsWith('v1:b:') && (!onlySealed || value.startsWith('v1:'))).map(([id, value]) => ({ id, value }));
        }
        const [next, previous, id] = params as string[];
        if (rows.get(id) !== previous) return [[], 0];
        rows.set(id, next);
        return [[], 1];
      },
    };
    const rotated = SecretCipher.fromConfig(`${keyB},${keyA}`);
    const result = await resealColumn(db, rotated, { table: '"t"', keyColumns: ['id'], column: 'url', kind: 'text', onlySealed: true });
    expect(result).toMatchObject({ resealed: 1, unreadable: 0 });
    expect(rows.get('1')).toMatch(/^v1:b:/);
    expect(rotated.open(rows.get('1') as string)).toBe('https://hooks.slack.com/services/secret');
    expect(rows.get('2')).toBe('https://hooks.example.com/not-a-secret');
  });
});

describe('RELAY_SECRET_KEYS in a config class', () => {
  it('accepts a valid list and refuses a missing or bad one, naming the problem and not the key', () => {
    expect(loadConfig(KeysConfig, { RELAY_SECRET_KEYS: `${keyA},${keyB}` }).RELAY_SECRET_KEYS).toBe(`${keyA},${keyB}`);
    expect(() => loadConfig(KeysConfig, {})).toThrow(/RELAY_SECRET_KEYS is required/);
    const short = randomBytes(8).toString('base64');
    let message = '';
    try {
      loadConfig(KeysConfig, { RELAY_SECRET_KEYS: `k:${short}` });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/key "k" must be 32 bytes/);
    expect(message).not.toContain(short);
  });
});
