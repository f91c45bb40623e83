import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { jest } from '@jest/globals';
import { loadConfig } from '@app/config';
import { RelayError, type AgentIdentity } from '@app/contracts';
import type { DirectoryLookups } from '../directory/directory-lookups';
import { EdgeConfig } from '../edge.config';
import { isAdminToken } from '../operator/sign-in/admin-token.guard';
import { AgentAuthenticator, extractApiKey } from './agent-authenticator';
import { AuthFailureThrottle } from './auth-failure-throttle';
import type { KeyFilter, KeyFilterVerdict } from './key-filter';
import { TokenVerifier } from './token-verifier';

/** What EdgeConfig requires beside the values a test sets. */
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

/** No identity provider configured: tokens are not looked at. */
const NO_TOKENS = new TokenVerifier(loadConfig(EdgeConfig, EDGE_REQUIRED));

const KEY = `ah_live_${'ABCDEFGH234567QR'.repeat(2)}`;
const IDENTITY: AgentIdentity = { id: 'a1', handle: 'bob@acme', name: 'Bob', role: null, org: 'acme' };

describe('extractApiKey', () => {
  it('reads Authorization: Bearer (any case) and X-API-Key', () => {
    expect(extractApiKey({ authorization: `Bearer ${KEY}` })).toBe(KEY);
    expect(extractApiKey({ authorization: `bearer   ${KEY}` })).toBe(KEY);
    expect(extractApiKey({ 'x-api-key': ` ${KEY} ` })).toBe(KEY);
    expect(extractApiKey({ authorization: `Bearer ${KEY}`, 'x-api-key': KEY })).toBe(KEY);
    expect(extractApiKey({})).toBeUndefined();
    expect(extractApiKey({ 'x-api-key': '' })).toBeUndefined();
  });

  it('refuses other schemes, a bare key and two different keys', () => {
    expect(() => extractApiKey({ authorization: KEY })).toThrow(RelayError);
    expect(() => extractApiKey({ authorization: `Basic ${KEY}` })).toThrow(RelayError);
    expect(() => extractApiKey({ authorization: `Bearer ${KEY}`, 'x-api-key': `${KEY.slice(0, -1)}A` })).toThrow(RelayError);
  });
});

describe('AgentAuthenticator', () => {
  function withDirectory(reply: () => Promise<AgentIdentity>) {
    const authenticate = jest.fn(reply);
    return {
      authenticate,
      authenticator: new AgentAuthenticator(
        { authenticate } as unknown as DirectoryLookups,
        new AuthFailureThrottle(loadConfig(EdgeConfig, EDGE_REQUIRED)),
        NO_TOKENS,
      ),
    };
  }

  it('asks the directory with the key only', async () => {
    const { authenticate, authenticator } = withDirectory(async () => IDENTITY);
    await expect(authenticator.authenticate({ 'x-api-key': KEY })).resolves.toEqual(IDENTITY);
    expect(authenticate).toHaveBeenCalledWith(KEY);
  });

  it('refuses a missing or malformed key without asking the directory', async () => {
    const { authenticate, authenticator } = withDirectory(async () => IDENTITY);
    for (const headers of [{}, { authorization: 'Bearer admin-token-0123456789abcdef' }, { 'x-api-key': KEY.toLowerCase() }]) {
      await expect(authenticator.authenticate(headers)).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
    expect(authenticate).not.toHaveBeenCalled();
  });

  it('answers 429 to an address past its failures without asking the directory, and lets a key it accepted through', async () => {
    const throttle = new AuthFailureThrottle(loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_AUTH_FAILURES_PER_WINDOW: '3' }));
    const authenticate = jest.fn(async (key: string) => {
      if (key === KEY) return IDENTITY;
      throw new RelayError('unauthenticated', 'Invalid API key');
    });
    const authenticator = new AgentAuthenticator({ authenticate } as unknown as DirectoryLookups, throttle, NO_TOKENS);
    await expect(authenticator.authenticate({ 'x-api-key': KEY }, '10.0.0.1')).resolves.toEqual(IDENTITY);
    const wrong = (index: number): string => `ah_live_${'BCDEFGHIJKLMN'[index].repeat(32)}`;
    for (let index = 0; index < 3; index += 1) {
      await expect(authenticator.authenticate({ 'x-api-key': wrong(index) }, '10.0.0.1')).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
    authenticate.mockClear();
    await expect(authenticator.authenticate({ 'x-api-key': wrong(9) }, '10.0.0.1')).rejects.toMatchObject({
      reason: 'rate_limited',
      data: { retry_after_seconds: 60 },
    });
    expect(authenticate).not.toHaveBeenCalled();
    await expect(authenticator.authenticate({ 'x-api-key': KEY }, '10.0.0.1')).resolves.toEqual(IDENTITY);
    await expect(authenticator.authenticate({ 'x-api-key': wrong(8) }, '10.0.0.2')).rejects.toMatchObject({ reason: 'unauthenticated' });
    // One wrong key that failed 3 times is blocked from any address; another key with its prefix is not.
    for (const address of ['10.0.1.1', '10.0.1.2', '10.0.1.3']) {
      await expect(authenticator.authenticate({ 'x-api-key': wrong(10) }, address)).rejects.toMatchObject({ reason: 'unauthenticated' });
    }
    await expect(authenticator.authenticate({ 'x-api-key': wrong(10) }, '10.0.1.4')).rejects.toMatchObject({ reason: 'rate_limited' });
    await expect(authenticator.authenticate({ 'x-api-key': `${wrong(10).slice(0, 16)}${'Q'.repeat(24)}` }, '10.0.1.5')).rejects.toMatchObject({
      reason: 'unauthenticated',
    });
  });
});

describe('AuthFailureThrottle', () => {
  const config = loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_AUTH_FAILURES_PER_WINDOW: '2', RELAY_AUTH_FAILURE_WINDOW_MS: '10000' });

  it('blocks a secret from any address by its whole value, never by a shared prefix, and forgets failures once the window is over', () => {
    const throttle = new AuthFailureThrottle(config);
    const secret = `${'P'.repeat(16)}-first`;
    throttle.recordFailure('10.0.0.1', secret, 0);
    throttle.recordFailure('10.0.0.2', secret, 1000);
    expect(() => throttle.assertAllowed('10.0.0.3', secret, 2000)).toThrow(/retry after 8 s/);
    expect(() => throttle.assertAllowed('10.0.0.3', `${'P'.repeat(16)}-second`, 2000)).not.toThrow();
    expect(() => throttle.assertAllowed('10.0.0.3', secret, 10000)).not.toThrow();
  });

  it('lets a secret accepted before pass an address past its budget, for as long as this edge remembers it', () => {
    const throttle = new AuthFailureThrottle(config);
    throttle.recordSuccess('known-secret');
    throttle.recordFailure('10.0.0.9', 'guess-1', 0);
    throttle.recordFailure('10.0.0.9', 'guess-2', 0);
    expect(() => throttle.assertAllowed('10.0.0.9', 'guess-3', 1000)).toThrow(/Too many failed/);
    expect(() => throttle.assertAllowed('10.0.0.9', 'known-secret', 1000)).not.toThrow();
    expect(() => throttle.assertAllowed('10.0.0.9', 'known-secret', 1_000_000)).not.toThrow();
    // Once refused (revoked, say), it is throttled like any other secret.
    throttle.recordFailure('10.0.0.9', 'known-secret', 1000);
    expect(() => throttle.assertAllowed('10.0.0.9', 'known-secret', 1000)).toThrow(/Too many failed/);
  });

  it("checks a signed token against its own budget only, never its address's", () => {
    const throttle = new AuthFailureThrottle(config);
    throttle.recordFailure('10.0.0.9', 'guess-1', 0);
    throttle.recordFailure('10.0.0.9', 'guess-2', 0);
    expect(() => throttle.assertAllowed('10.0.0.9', 'new.signed.token', 1000)).toThrow(/Too many failed/);
    expect(() => throttle.assertSecretAllowed('new.signed.token', 1000)).not.toThrow();
    throttle.recordFailure('10.0.0.9', 'forged.signed.token', 1000);
    throttle.recordFailure('10.0.0.9', 'forged.signed.token', 1000);
    expect(() => throttle.assertSecretAllowed('forged.signed.token', 1000)).toThrow(/retry after 10 s/);
    expect(() => throttle.assertSecretAllowed('forged.signed.token', 11_000)).not.toThrow();
  });
});

describe('AuthFailureThrottle with the key filter', () => {
  const config = loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_AUTH_FAILURES_PER_WINDOW: '2', RELAY_AUTH_FAILURE_WINDOW_MS: '10000' });
  const listedKey = `ah_live_${'L'.repeat(32)}`;
  const newKey = `ah_live_${'N'.repeat(32)}`;
  function filterOf(verdicts: Record<string, KeyFilterVerdict>, otherwise: KeyFilterVerdict): Pick<KeyFilter, 'verdict'> {
    return { verdict: (key: string) => verdicts[key] ?? otherwise };
  }
  function throttledAddress(throttle: AuthFailureThrottle): void {
    throttle.recordFailure('10.0.0.9', 'guess-1', 0);
    throttle.recordFailure('10.0.0.9', 'guess-2', 0);
  }

  it('lets a key the filter lists pass an address past its budget, and answers 429 to one it does not list', () => {
    const throttle = new AuthFailureThrottle(config, filterOf({ [listedKey]: 'listed' }, 'unlisted'));
    throttledAddress(throttle);
    expect(() => throttle.assertAllowed('10.0.0.9', listedKey, 1000)).not.toThrow();
    expect(() => throttle.assertAllowed('10.0.0.9', newKey, 1000)).toThrow(/retry after 9 s/);
    expect(() => throttle.assertAllowed('10.0.0.9', undefined, 1000)).toThrow(/Too many failed/);
  });

  it('still refuses a listed key that is itself past its budget', () => {
    const throttle = new AuthFailureThrottle(config, filterOf({ [listedKey]: 'listed' }, 'unlisted'));
    throttle.recordFailure('10.0.0.1', listedKey, 0);
    throttle.recordFailure('10.0.0.2', listedKey, 0);
    expect(() => throttle.assertAllowed('10.0.0.3', listedKey, 1000)).toThrow(/Too many failed/);
  });

  it('while the filter is not loaded, lets only keys accepted before pass a throttled address', () => {
    const throttle = new AuthFailureThrottle(config, filterOf({}, 'unknown'));
    throttle.recordSuccess(listedKey);
    throttledAddress(throttle);
    expect(() => throttle.assertAllowed('10.0.0.9', listedKey, 1000)).not.toThrow();
    expect(() => throttle.assertAllowed('10.0.0.9', newKey, 1000)).toThrow(/Too many failed/);
  });

  it('keeps the pass of a key accepted before even when the filter does not list it', () => {
    const throttle = new AuthFailureThrottle(config, filterOf({}, 'unlisted'));
    throttle.recordSuccess(listedKey);
    throttledAddress(throttle);
    expect(() => throttle.assertAllowed('10.0.0.9', listedKey, 1000)).not.toThrow();
  });

  it('never asks the filter about an address within its budget', () => {
    const verdict = jest.fn((): KeyFilterVerdict => 'unlisted');
    const throttle = new AuthFailureThrottle(config, { verdict });
    expect(() => throttle.assertAllowed('10.0.0.5', newKey, 1000)).not.toThrow();
    expect(verdict).not.toHaveBeenCalled();
  });
});

describe('isAdminToken', () => {
  const token = 'admin-token-0123456789abcdef';
  it('matches only the configured token, and never when unset or when shaped like an agent key', () => {
    expect(isAdminToken(token, token)).toBe(true);
    expect(isAdminToken(`${token}x`, token)).toBe(false);
    expect(isAdminToken(token.slice(1), token)).toBe(false);
    expect(isAdminToken(undefined, token)).toBe(false);
    expect(isAdminToken(token, undefined)).toBe(false);
    expect(isAdminToken('', '')).toBe(false);
    expect(isAdminToken(KEY, KEY)).toBe(false);
  });
});

describe('RELAY_ADMIN_TOKEN', () => {
  it('may not be shaped like an agent key', () => {
    expect(() => loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_ADMIN_TOKEN: KEY })).toThrow(/agent API key/);
    expect(loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_ADMIN_TOKEN: 'admin-token-0123456789abcdef' }).RELAY_ADMIN_TOKEN).toBe(
      'admin-token-0123456789abcdef',
    );
  });
});

describe('RELAY_TRUSTED_PROXIES', () => {
  it('reads a comma-separated list of addresses, CIDR ranges and proxy-addr names, none by default', () => {
    expect(loadConfig(EdgeConfig, EDGE_REQUIRED).RELAY_TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_TRUSTED_PROXIES: '' }).RELAY_TRUSTED_PROXIES).toEqual([]);
    expect(loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_TRUSTED_PROXIES: '10.0.0.0/8, fd00::/8,192.0.2.7, loopback' }).RELAY_TRUSTED_PROXIES).toEqual([
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.7',
      'loopback',
    ]);
  });

  it('refuses anything else at boot, naming the key', () => {
    for (const value of ['10.0.0.0/33', 'proxy.internal', '10.0.0.0/8/1', '::1/129', '*']) {
      expect(() => loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_TRUSTED_PROXIES: value })).toThrow(/RELAY_TRUSTED_PROXIES/);
    }
  });
});
