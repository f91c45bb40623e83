import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { API_KEY_PATTERN, API_KEY_PREFIX } from '@app/contracts';

const BASE32_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** 20 random bytes: 160 bits, exactly 32 base32 characters. */
const KEY_RANDOM_BYTES = 20;
const DISPLAY_CHARS = 8;

/** RFC 4648 base32 without padding. */
export function base32(bytes: Uint8Array): string {
  let bits = 0;
  let value = 0;
  let output = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      output += BASE32_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) output += BASE32_ALPHABET[(value << (5 - bits)) & 31];
  return output;
}

export interface GeneratedKey {
  /** The key itself: shown once, never stored. */
  key: string;
  hash: string;
  prefix: string;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + DISPLAY_CHARS);
}

export function generateApiKey(): GeneratedKey {
  const key = `${API_KEY_PREFIX}${base32(randomBytes(KEY_RANDOM_BYTES))}`;
  return { key, hash: hashApiKey(key), prefix: displayPrefix(key) };
}

export function isWellFormedApiKey(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

/** Compares two hex digests in constant time. */
export function sameDigest(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && left.length > 0 && timingSafeEqual(left, right);
}
