import { randomBytes } from 'node:crypto';
import { loadConfig } from '@app/config';
import { openJsonValues, resealJsonValues, sealJsonValues } from './reseal';
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
