import { createHash } from 'node:crypto';
import { keyFilterBucketName, keyFilterDigest, keyFilterDigestOfKey } from './key-filter-bucket';

const KEY = `ah_live_${'ABCDEFGH234567QR'.repeat(2)}`;
const KEY_HASH = createHash('sha256').update(KEY, 'utf8').digest('hex');

describe('key filter digests', () => {
  it('are 64 bits of hex, the same from the key and from its stored hash', () => {
    expect(keyFilterDigestOfKey(KEY)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyFilterDigest(KEY_HASH)).toBe(keyFilterDigestOfKey(KEY));
    expect(keyFilterDigestOfKey(`${KEY.slice(0, -1)}A`)).not.toBe(keyFilterDigestOfKey(KEY));
  });

  it('never give out the stored hash or any part of it', () => {
    const digest = keyFilterDigest(KEY_HASH);
    expect(KEY_HASH).not.toContain(digest);
    expect(digest).not.toBe(createHash('sha256').update(KEY_HASH, 'utf8').digest('hex').slice(0, 16));
  });
});

describe('key filter bucket naming', () => {
  it('derives one bucket per subject prefix', () => {
    expect(keyFilterBucketName('')).toBe('RELAY_KEYS');
    expect(keyFilterBucketName('test_12_ab')).toBe('RELAY_KEYS_test_12_ab');
    expect(keyFilterBucketName('prod.eu')).toBe('RELAY_KEYS_prod_eu');
  });
});
