import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/**
 * The keys of the assertions the relay signs into its deliveries (docs/chains.md#who-asked-signed):
 * P-256 (ES256). The notifier holds one private key, `RELAY_ASSERTION_SIGNING_KEY`
 * (`id:<base64url of the 32-byte private scalar>`); the edge publishes every key a verifier may
 * meet, `RELAY_ASSERTION_PUBLIC_KEYS` (`id:<base64url of the 65-byte uncompressed point>,…`), as a
 * JWKS. The id is each key's `kid`.
 */
export const ASSERTION_ALG = 'ES256';
const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
const PRIVATE_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const PUBLIC_PATTERN = /^[A-Za-z0-9_-]{87}$/;
/** PKCS#8 DER of a P-256 private key without its public point, before its 32-byte scalar. */
const P256_PKCS8_PREFIX = Buffer.from('3041020100301306072a8648ce3d020106082a8648ce3d030107042730250201010420', 'hex');
/** SPKI DER of a P-256 public key, before its 65-byte uncompressed point. */
const P256_SPKI_PREFIX = Buffer.from('3059301306072a8648ce3d020106082a8648ce3d030107034200', 'hex');
/** The order of P-256: a private key is a scalar from 1 to one below it. */
const P256_ORDER = BigInt('0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551');

export class AssertionKeyError extends Error {
  override name = 'AssertionKeyError';
}

export interface AssertionSigningKey {
  id: string;
  key: KeyObject;
}

/** One key of the published set, as a JWK verifiers select by `kid`. */
export interface AssertionJwk {
  kty: 'EC';
  crv: 'P-256';
  x: string;
  y: string;
  kid: string;
  alg: typeof ASSERTION_ALG;
  use: 'sig';
}

function entryParts(variable: string, entry: string, index: number, pattern: RegExp, bytes: number): { id: string; encoded: string } {
  const separator = entry.indexOf(':');
  const id = separator > 0 ? entry.slice(0, separator) : '';
  if (!KEY_ID_PATTERN.test(id)) throw new AssertionKeyError(`${variable} entry ${index + 1} needs an id of 1-32 letters, digits, _ or - before ':'`);
  const encoded = entry.slice(separator + 1);
  if (!pattern.test(encoded)) throw new AssertionKeyError(`${variable} key "${id}" must be ${bytes} bytes in base64url (npm run assertion:signing-key)`);
  return { id, encoded };
}

/** `RELAY_ASSERTION_SIGNING_KEY`, the notifier's: `id:<base64url P-256 private scalar>`. The message never quotes the key. */
export function parseAssertionSigningKey(value: string): AssertionSigningKey {
  const entry = value.trim();
  if (entry.includes(',')) throw new AssertionKeyError('RELAY_ASSERTION_SIGNING_KEY holds one key (id:base64url); the edge lists every published one');
  const { id, encoded } = entryParts('RELAY_ASSERTION_SIGNING_KEY', entry, 0, PRIVATE_PATTERN, 32);
  const scalar = BigInt(`0x${Buffer.from(encoded, 'base64url').toString('hex')}`);
  if (scalar === 0n || scalar >= P256_ORDER)
    throw new AssertionKeyError(`RELAY_ASSERTION_SIGNING_KEY key "${id}" is not a P-256 private key (npm run assertion:signing-key)`);
  try {
    return { id, key: createPrivateKey({ key: Buffer.concat([P256_PKCS8_PREFIX, Buffer.from(encoded, 'base64url')]), format: 'der', type: 'pkcs8' }) };
  } catch {
    throw new AssertionKeyError(`RELAY_ASSERTION_SIGNING_KEY key "${id}" is not a P-256 private key (npm run assertion:signing-key)`);
  }
}

/** `RELAY_ASSERTION_PUBLIC_KEYS`, the edge's: `id:<base64url uncompressed P-256 point>,…`, every one published. */
export function parseAssertionPublicKeys(value: string): Map<string, KeyObject> {
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new AssertionKeyError('RELAY_ASSERTION_PUBLIC_KEYS must list at least one key as id:base64url');
  const keys = new Map<string, KeyObject>();
  for (const [index, entry] of entries.entries()) {
    const { id, encoded } = entryParts('RELAY_ASSERTION_PUBLIC_KEYS', entry, index, PUBLIC_PATTERN, 65);
    if (keys.has(id)) throw new AssertionKeyError(`RELAY_ASSERTION_PUBLIC_KEYS names key "${id}" twice`);
    try {
      keys.set(id, createPublicKey({ key: Buffer.concat([P256_SPKI_PREFIX, Buffer.from(encoded, 'base64url')]), format: 'der', type: 'spki' }));
    } catch {
      throw new AssertionKeyError(`RELAY_ASSERTION_PUBLIC_KEYS key "${id}" is not a P-256 public key`);
    }
  }
  return keys;
}

/** The uncompressed point of a P-256 public key, base64url. */
function encodedPoint(publicKey: KeyObject): string {
  const { x, y } = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  return Buffer.concat([Buffer.from([4]), Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')]).toString('base64url');
}

/** A new key: the notifier's `RELAY_ASSERTION_SIGNING_KEY` and the entry the edge's `RELAY_ASSERTION_PUBLIC_KEYS` publishes. */
export function generateAssertionKeyPair(id: string): { signingKey: string; publicKey: string } {
  if (!KEY_ID_PATTERN.test(id)) throw new AssertionKeyError('a key id is 1-32 letters, digits, _ or -');
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const d = privateKey.export({ format: 'jwk' }).d as string;
  return { signingKey: `${id}:${d}`, publicKey: `${id}:${encodedPoint(publicKey)}` };
}

/** The public half of a `RELAY_ASSERTION_SIGNING_KEY`, as an entry of `RELAY_ASSERTION_PUBLIC_KEYS`. */
export function assertionPublicKeyOf(signingKey: string): string {
  const { id, key } = parseAssertionSigningKey(signingKey);
  return `${id}:${encodedPoint(createPublicKey(key))}`;
}

/** The JWKS the edge serves: every published key, in the order listed. */
export function assertionJwks(publicKeys: ReadonlyMap<string, KeyObject>): { keys: AssertionJwk[] } {
  return {
    keys: [...publicKeys].map(([kid, key]) => {
      const { x, y } = key.export({ format: 'jwk' }) as { x: string; y: string };
      return { kty: 'EC', crv: 'P-256', x, y, kid, alg: ASSERTION_ALG, use: 'sig' };
    }),
  };
}
