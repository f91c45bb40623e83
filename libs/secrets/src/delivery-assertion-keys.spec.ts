import { createPublicKey } from 'node:crypto';
import {
  AssertionKeyError,
  assertionJwks,
  assertionPublicKeyOf,
  generateAssertionKeyPair,
  parseAssertionPublicKeys,
  parseAssertionSigningKey,
} from './delivery-assertion-keys';

describe('delivery assertion keys', () => {
  it('makes a P-256 pair whose public entry is the signing key’s public half', () => {
    const pair = generateAssertionKeyPair('k20260101');
    expect(pair.signingKey).toMatch(/^k20260101:[A-Za-z0-9_-]{43}$/);
    expect(pair.publicKey).toMatch(/^k20260101:[A-Za-z0-9_-]{87}$/);
    expect(assertionPublicKeyOf(pair.signingKey)).toBe(pair.publicKey);
    const signing = parseAssertionSigningKey(pair.signingKey);
    const published = parseAssertionPublicKeys(pair.publicKey).get('k20260101');
    expect(createPublicKey(signing.key).export({ format: 'jwk' })).toEqual(published?.export({ format: 'jwk' }));
  });

  it('publishes every listed key as an ES256 JWK named by its id, in order', () => {
    const [a, b] = [generateAssertionKeyPair('a'), generateAssertionKeyPair('b')];
    const jwks = assertionJwks(parseAssertionPublicKeys(` ${a.publicKey} , ${b.publicKey},`));
    expect(jwks.keys.map((key) => key.kid)).toEqual(['a', 'b']);
    expect(jwks.keys[0]).toEqual({ kty: 'EC', crv: 'P-256', x: expect.any(String), y: expect.any(String), kid: 'a', alg: 'ES256', use: 'sig' });
    expect(Object.keys(jwks.keys[0])).not.toContain('d');
  });

  it('refuses malformed keys without quoting them', () => {
    expect(() => parseAssertionSigningKey('no-id')).toThrow(AssertionKeyError);
    expect(() => parseAssertionSigningKey(':abc')).toThrow(/needs an id/);
    const zero = `z:${Buffer.alloc(32).toString('base64url')}`;
    expect(() => parseAssertionSigningKey(zero)).toThrow(/key "z" is not a P-256 private key/);
    expect(() => parseAssertionPublicKeys('')).toThrow(/at least one key/);
    expect(() => parseAssertionPublicKeys(`x:${generateAssertionKeyPair('x').signingKey.split(':')[1]}`)).toThrow(/key "x" must be 65 bytes/);
    expect(() => generateAssertionKeyPair('not an id')).toThrow(AssertionKeyError);
  });
});
