import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { CompactEncrypt, compactDecrypt, decodeProtectedHeader } from 'jose';

/**
 * Secrets on their way to the notifier over NATS (upstream credentials, mTLS private keys, webhook
 * signing secrets, push tokens) travel sealed to the notifier's X25519 key as compact JWE
 * (ECDH-ES+A256KW, A256GCM): whoever holds a NATS credential that sees the message, the notifier's
 * included, reads nothing without the notifier's private key.
 */
const ALG = 'ECDH-ES+A256KW';
const ENC = 'A256GCM';
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** PKCS#8 DER of an X25519 private key, before its 32 bytes. */
const X25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
/** SPKI DER of an X25519 public key, before its 32 bytes. */
const X25519_SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

export class NotifierSealingKeyError extends Error {
  override name = 'NotifierSealingKeyError';
}

/** A sealed value the notifier cannot open: not a JWE to its key, an unknown key id, or altered bytes. */
export class NotifierUnsealError extends Error {
  override name = 'NotifierUnsealError';
}

export interface NotifierPublicKey {
  id: string;
  key: KeyObject;
}

function entryParts(variable: string, entry: string, index: number): { id: string; encoded: string } {
  const separator = entry.indexOf(':');
  const id = separator > 0 ? entry.slice(0, separator) : '';
  if (!KEY_ID_PATTERN.test(id)) throw new NotifierSealingKeyError(`${variable} entry ${index + 1} needs an id of 1-32 letters, digits, _ or - before ':'`);
  const encoded = entry.slice(separator + 1);
  if (!KEY_PATTERN.test(encoded)) throw new NotifierSealingKeyError(`${variable} key "${id}" must be 32 bytes in base64url (npm run notifier:sealing-key)`);
  return { id, encoded };
}

/**
 * `RELAY_NOTIFIER_SEALING_KEYS`, the notifier's own: `id:<base64url X25519 private key>,…`. The
 * first key's public half is the one the other services seal to; every listed key opens.
 */
export function parseNotifierSealingKeys(value: string): Map<string, KeyObject> {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new NotifierSealingKeyError('RELAY_NOTIFIER_SEALING_KEYS must list at least one key as id:base64url');
  const keys = new Map<string, KeyObject>();
  for (const [index, entry] of entries.entries()) {
    const { id, encoded } = entryParts('RELAY_NOTIFIER_SEALING_KEYS', entry, index);
    if (keys.has(id)) throw new NotifierSealingKeyError(`RELAY_NOTIFIER_SEALING_KEYS names key "${id}" twice`);
    keys.set(id, createPrivateKey({ key: Buffer.concat([X25519_PKCS8_PREFIX, Buffer.from(encoded, 'base64url')]), format: 'der', type: 'pkcs8' }));
  }
  return keys;
}

/** `RELAY_NOTIFIER_PUBLIC_KEY`, what the edge, the directory and the tasks service seal to: `id:<base64url X25519 public key>`. */
export function parseNotifierPublicKey(value: string): NotifierPublicKey {
  const { id, encoded } = entryParts('RELAY_NOTIFIER_PUBLIC_KEY', value.trim(), 0);
  return { id, key: createPublicKey({ key: Buffer.concat([X25519_SPKI_PREFIX, Buffer.from(encoded, 'base64url')]), format: 'der', type: 'spki' }) };
}

/** A new key pair: the notifier's `RELAY_NOTIFIER_SEALING_KEYS` entry and the others' `RELAY_NOTIFIER_PUBLIC_KEY`. */
export function generateNotifierSealingKeyPair(id: string): { sealingKey: string; publicKey: string } {
  if (!KEY_ID_PATTERN.test(id)) throw new NotifierSealingKeyError('a key id is 1-32 letters, digits, _ or -');
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const d = privateKey.export({ format: 'jwk' }).d as string;
  const x = publicKey.export({ format: 'jwk' }).x as string;
  return { sealingKey: `${id}:${d}`, publicKey: `${id}:${x}` };
}

/** The public half of a `RELAY_NOTIFIER_SEALING_KEYS` entry, as `RELAY_NOTIFIER_PUBLIC_KEY`. */
export function notifierPublicKeyOf(sealingKeys: string): string {
  const [[id, key]] = parseNotifierSealingKeys(sealingKeys);
  return `${id}:${createPublicKey(key).export({ format: 'jwk' }).x as string}`;
}

/** Seals a secret to the notifier's public key (a compact JWE; every call a new ephemeral key). */
export async function sealForNotifier(publicKey: NotifierPublicKey, secret: string): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(secret)).setProtectedHeader({ alg: ALG, enc: ENC, kid: publicKey.id }).encrypt(publicKey.key);
}

/** Opens what was sealed to one of the notifier's keys. */
export async function unsealForNotifier(privateKeys: ReadonlyMap<string, KeyObject>, sealed: string): Promise<string> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(sealed).kid;
  } catch {
    throw new NotifierUnsealError('the value is not sealed to the notifier (not a compact JWE)');
  }
  const key = typeof kid === 'string' ? privateKeys.get(kid) : undefined;
  if (!key) throw new NotifierUnsealError(`the value is sealed to a notifier key that is not listed (${typeof kid === 'string' ? kid : 'no key id'})`);
  try {
    const { plaintext } = await compactDecrypt(sealed, key, { keyManagementAlgorithms: [ALG], contentEncryptionAlgorithms: [ENC] });
    return new TextDecoder().decode(plaintext);
  } catch {
    throw new NotifierUnsealError(`the value sealed to notifier key ${kid as string} could not be opened`);
  }
}

/** Seals what the edge, the directory and the tasks service send the notifier (RELAY_NOTIFIER_PUBLIC_KEY). */
export class NotifierSealer {
  private readonly publicKey: NotifierPublicKey;

  constructor(publicKey: string) {
    this.publicKey = parseNotifierPublicKey(publicKey);
  }

  seal(secret: string): Promise<string> {
    return sealForNotifier(this.publicKey, secret);
  }

  /** A value as JSON, sealed. */
  sealJson(value: unknown): Promise<string> {
    return sealForNotifier(this.publicKey, JSON.stringify(value));
  }
}

/** Opens, in the notifier, what was sealed to it (RELAY_NOTIFIER_SEALING_KEYS). */
export class NotifierUnsealer {
  private readonly keys: ReadonlyMap<string, KeyObject>;

  constructor(sealingKeys: string) {
    this.keys = parseNotifierSealingKeys(sealingKeys);
  }

  open(sealed: string): Promise<string> {
    return unsealForNotifier(this.keys, sealed);
  }
}
