import { randomBytes } from 'node:crypto';
import { generateSecretKeyEntry, parseSecretKeys, SecretCipher, SecretDecryptionError, SecretKeyError } from './secret-cipher';

const keyA = `a:${randomBytes(32).toString('base64')}`;
const keyB = `b:${randomBytes(32).toString('base64url')}`;

describe('SecretCipher', () => {
  it('round-trips a value and never stores it in clear', () => {
    const cipher = SecretCipher.fromConfig(keyA);
    const sealed = cipher.seal('Bearer s3cr3t-credentials');
    expect(sealed).toMatch(/^v1:a:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('s3cr3t');
    expect(cipher.open(sealed)).toBe('Bearer s3cr3t-credentials');
    expect(cipher.open(cipher.seal(''))).toBe('');
    expect(cipher.open(cipher.seal('ünïcødé ✓'))).toBe('ünïcødé ✓');
  });

  it('uses a fresh IV for every value', () => {
    const cipher = SecretCipher.fromConfig(keyA);
    expect(cipher.seal('same')).not.toBe(cipher.seal('same'));
  });

  it('refuses to open a value with the wrong key under the same id', () => {
    const sealed = SecretCipher.fromConfig(keyA).seal('secret');
    const impostor = SecretCipher.fromConfig(`a:${randomBytes(32).toString('base64')}`);
    expect(() => impostor.open(sealed)).toThrow(SecretDecryptionError);
  });

  it('refuses a tampered ciphertext, tag or IV', () => {
    const cipher = SecretCipher.fromConfig(keyA);
    const sealed = cipher.seal('secret value');
    const [version, id, iv, body] = sealed.split(':');
    const flip = (text: string, at: number): string => {
      const bytes = Buffer.from(text, 'base64url');
      bytes[at] ^= 0x01;
      return bytes.toString('base64url');
    };
    expect(() => cipher.open([version, id, iv, flip(body, 0)].join(':'))).toThrow(SecretDecryptionError);
    expect(() => cipher.open([version, id, iv, flip(body, Buffer.from(body, 'base64url').length - 1)].join(':'))).toThrow(SecretDecryptionError);
    expect(() => cipher.open([version, id, flip(iv, 3), body].join(':'))).toThrow(SecretDecryptionError);
  });

  it('names an unknown key id without opening anything', () => {
    const sealed = SecretCipher.fromConfig(keyB).seal('secret');
    expect(() => SecretCipher.fromConfig(keyA).open(sealed)).toThrow(/key "b".*does not list/);
  });

  it('reads values stored before encryption as they are', () => {
    const cipher = SecretCipher.fromConfig(keyA);
    expect(cipher.open('whsec_plainOldSecret')).toBe('whsec_plainOldSecret');
    expect(cipher.isCurrent('whsec_plainOldSecret')).toBe(false);
    expect(cipher.openNullable(null)).toBeNull();
  });

  it('rotates: a new first key seals, the old one still opens, and re-sealing moves values to the new key', () => {
    const old = SecretCipher.fromConfig(keyA);
    const sealedOld = old.seal('rotate me');
    const rotated = SecretCipher.fromConfig(`${keyB},${keyA}`);
    expect(rotated.primaryKeyId).toBe('b');
    expect(rotated.open(sealedOld)).toBe('rotate me');
    expect(rotated.isCurrent(sealedOld)).toBe(false);
    const resealed = rotated.reseal(sealedOld);
    expect(resealed.startsWith('v1:b:')).toBe(true);
    expect(rotated.isCurrent(resealed)).toBe(true);
    expect(rotated.reseal(resealed)).toBe(resealed);
    expect(rotated.reseal('clear')).toMatch(/^v1:b:/);
    // Once the old key is retired, only values re-sealed with the new one open.
    const retired = SecretCipher.fromConfig(keyB);
    expect(retired.open(resealed)).toBe('rotate me');
    expect(() => retired.open(sealedOld)).toThrow(SecretDecryptionError);
  });
});

describe('parseSecretKeys', () => {
  it('reads a list of id:base64key, first one first', () => {
    expect(parseSecretKeys(` ${keyB} , ${keyA} `).map((key) => key.id)).toEqual(['b', 'a']);
    expect(generateSecretKeyEntry('k2025')).toMatch(/^k2025:[A-Za-z0-9+/]{43}=$/);
    expect(parseSecretKeys(generateSecretKeyEntry('x'))[0].key).toHaveLength(32);
  });

  it('rejects empty lists, bad ids, short keys and duplicates without quoting the key', () => {
    const short = randomBytes(16).toString('base64');
    expect(() => parseSecretKeys('')).toThrow(SecretKeyError);
    expect(() => parseSecretKeys(`:${randomBytes(32).toString('base64')}`)).toThrow(/entry 1 needs an id/);
    expect(() => parseSecretKeys(`bad id:${randomBytes(32).toString('base64')}`)).toThrow(/entry 1 needs an id/);
    let message = '';
    try {
      parseSecretKeys(`k:${short}`);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/key "k" must be 32 bytes/);
    expect(message).not.toContain(short);
    expect(() => parseSecretKeys('k:not base64!')).toThrow(/must be 32 bytes/);
    expect(() => parseSecretKeys(`${keyA},${keyA}`)).toThrow(/twice/);
  });
});
