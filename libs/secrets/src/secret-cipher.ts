import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Format tag of a sealed value: `v1:<keyId>:<iv>:<ciphertext + GCM tag>`, both parts base64url. */
const SEALED_PREFIX = 'v1:';
const SEALED_PATTERN = /^v1:([A-Za-z0-9_-]{1,32}):([A-Za-z0-9_-]{16}):([A-Za-z0-9_-]{22,})$/;
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SecretKeyError extends Error {
  override name = 'SecretKeyError';
}

/** A sealed value that cannot be opened: unknown key id, wrong key or altered bytes. */
export class SecretDecryptionError extends Error {
  override name = 'SecretDecryptionError';
}

export interface SecretKey {
  id: string;
  key: Buffer;
}

/**
 * Parses `RELAY_SECRET_KEYS`: a comma-separated list of `id:base64key` (32-byte AES-256 keys,
 * base64 or base64url). The first key seals new values; all of them open stored ones. Errors never
 * quote the key material.
 */
export function parseSecretKeys(value: string): SecretKey[] {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new SecretKeyError('RELAY_SECRET_KEYS must list at least one key as id:base64key');
  const keys: SecretKey[] = [];
  for (const [index, entry] of entries.entries()) {
    const separator = entry.indexOf(':');
    const id = separator > 0 ? entry.slice(0, separator) : '';
    if (!KEY_ID_PATTERN.test(id)) throw new SecretKeyError(`RELAY_SECRET_KEYS entry ${index + 1} needs an id of 1-32 letters, digits, _ or - before ':'`);
    const encoded = entry.slice(separator + 1);
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
    if (key.length !== KEY_BYTES) throw new SecretKeyError(`RELAY_SECRET_KEYS key "${id}" must be ${KEY_BYTES} bytes in base64 (e.g. openssl rand -base64 32)`);
    if (keys.some((known) => known.id === id)) throw new SecretKeyError(`RELAY_SECRET_KEYS names key "${id}" twice`);
    keys.push({ id, key });
  }
  return keys;
}

/** A new `id:base64key` entry for `RELAY_SECRET_KEYS`. */
export function generateSecretKeyEntry(id: string): string {
  if (!KEY_ID_PATTERN.test(id)) throw new SecretKeyError(`a key id is 1-32 letters, digits, _ or -`);
  return `${id}:${randomBytes(KEY_BYTES).toString('base64')}`;
}

/**
 * Seals secrets stored at rest with AES-256-GCM. Each value carries the id of the key that sealed
 * it, so keys can be rotated: add a new key in front, re-seal, then retire the old one. Values that
 * are not sealed (rows written before encryption) are read as they are, until re-sealed.
 */
export class SecretCipher {
  private readonly keys: Map<string, Buffer>;
  readonly primaryKeyId: string;

  constructor(keys: SecretKey[]) {
    if (keys.length === 0) throw new SecretKeyError('a secret cipher needs at least one key');
    this.keys = new Map(keys.map((entry) => [entry.id, entry.key]));
    this.primaryKeyId = keys[0].id;
  }

  static fromConfig(value: string): SecretCipher {
    return new SecretCipher(parseSecretKeys(value));
  }

  seal(plaintext: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.keys.get(this.primaryKeyId) as Buffer, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${SEALED_PREFIX}${this.primaryKeyId}:${iv.toString('base64url')}:${sealed.toString('base64url')}`;
  }

  sealNullable(plaintext: string | null): string | null {
    return plaintext === null ? null : this.seal(plaintext);
  }

  /** The plaintext of a sealed value; a value that is not sealed is returned as it is. */
  open(stored: string): string {
    const parts = SEALED_PATTERN.exec(stored);
    if (!parts) return stored;
    const [, keyId, ivText, sealedText] = parts;
    const key = this.keys.get(keyId);
    if (!key) throw new SecretDecryptionError(`a stored secret is sealed with key "${keyId}", which RELAY_SECRET_KEYS does not list`);
    const sealed = Buffer.from(sealedText, 'base64url');
    if (sealed.length < TAG_BYTES) throw new SecretDecryptionError('a stored secret is truncated');
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(ivText, 'base64url'));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretDecryptionError(`a stored secret sealed with key "${keyId}" does not open: wrong key or altered value`);
    }
  }

  openNullable(stored: string | null): string | null {
    return stored === null ? null : this.open(stored);
  }

  /** True when the value is sealed with the first key; clear values and older keys need re-sealing. */
  isCurrent(stored: string): boolean {
    return SEALED_PATTERN.exec(stored)?.[1] === this.primaryKeyId;
  }

  /** The value sealed with the first key (opened first if it was sealed with another). */
  reseal(stored: string): string {
    return this.isCurrent(stored) ? stored : this.seal(this.open(stored));
  }

  static isSealed(stored: string): boolean {
    return SEALED_PATTERN.test(stored);
  }
}
