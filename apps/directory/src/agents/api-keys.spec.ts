import { API_KEY_PATTERN } from '@app/contracts';
import { base32, displayPrefix, generateApiKey, hashApiKey, sameDigest } from './api-keys';

describe('API keys', () => {
  it('encodes base32 as RFC 4648 does', () => {
    expect(base32(Buffer.from(''))).toBe('');
    expect(base32(Buffer.from('f'))).toBe('MY');
    expect(base32(Buffer.from('foobar'))).toBe('MZXW6YTBOI');
  });

  it('generates ah_live_ + 32 base32 characters, different every time', () => {
    const keys = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const { key, hash, prefix } = generateApiKey();
      expect(key).toMatch(API_KEY_PATTERN);
      expect(hash).toBe(hashApiKey(key));
      expect(hash).toMatch(/^[0-9a-f]{64}$/);
      expect(prefix).toBe(key.slice(0, 16));
      expect(displayPrefix(key)).toMatch(/^ah_live_[A-Z2-7]{8}$/);
      keys.add(key);
    }
    expect(keys.size).toBe(200);
  });

  it('compares digests exactly', () => {
    const a = hashApiKey('ah_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    const b = hashApiKey('ah_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB');
    expect(sameDigest(a, a)).toBe(true);
    expect(sameDigest(a, b)).toBe(false);
    expect(sameDigest(a, a.slice(0, 62))).toBe(false);
    expect(sameDigest('', '')).toBe(false);
  });
});
