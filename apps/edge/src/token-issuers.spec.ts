import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigValidationError, loadConfig } from '@app/config';
import { RelayError } from '@app/contracts';
import { EdgeConfig } from './edge.config';
import { DEFAULT_HANDLE_CLAIM, parseTokenIssuers } from './token-issuers';
import { bearerChallenge, invalidToken } from './auth/token-verifier';

/** What EdgeConfig requires beside the values a test sets. */
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

describe('RELAY_OIDC_ISSUERS', () => {
  it('reads a JSON list: one audience or several, the handle claim defaulting to agentrelay_handle', () => {
    expect(
      parseTokenIssuers(
        JSON.stringify([
          { issuer: 'https://idp.example.com/oauth2/default', audience: 'api://agentrelay' },
          { issuer: 'https://login.example.org/tenant/v2.0', audience: ['a', 'b'], handle_claim: 'azp_handle' },
        ]),
      ),
    ).toEqual([
      { issuer: 'https://idp.example.com/oauth2/default', audiences: ['api://agentrelay'], handleClaim: DEFAULT_HANDLE_CLAIM },
      { issuer: 'https://login.example.org/tenant/v2.0', audiences: ['a', 'b'], handleClaim: 'azp_handle' },
    ]);
    expect(parseTokenIssuers(undefined)).toEqual([]);
  });

  it('reads the list from a file whose path it is given', () => {
    const folder = mkdtempSync(join(tmpdir(), 'issuers-'));
    try {
      const path = join(folder, 'issuers.json');
      writeFileSync(path, JSON.stringify([{ issuer: 'https://idp.example.com', audience: 'relay' }]));
      expect(parseTokenIssuers(path)).toEqual([{ issuer: 'https://idp.example.com', audiences: ['relay'], handleClaim: DEFAULT_HANDLE_CLAIM }]);
    } finally {
      rmSync(folder, { recursive: true });
    }
  });

  it.each([
    ['[{"issuer": "https://idp.example.com"', /is not valid JSON/],
    ['[{"issuer": "ftp://idp.example.com", "audience": "relay"}]', /\[0\]\.issuer: issuer must be an http\(s\) URL/],
    ['[{"issuer": "https://idp.example.com"}]', /\[0\]\.audience/],
    ['[{"issuer": "https://idp.example.com", "audience": "relay", "extra": 1}]', /extra/],
    ['[{"issuer": "https://a.example", "audience": "x"}, {"issuer": "https://a.example", "audience": "y"}]', /listed twice/],
    ['no-such-issuers-file.json', /neither a JSON list nor a readable file \(ENOENT/],
  ])('refuses %s at startup with a clear error', (value, problem) => {
    expect(() => parseTokenIssuers(value)).toThrow(problem);
    let thrown: unknown;
    try {
      loadConfig(EdgeConfig, { ...EDGE_REQUIRED, RELAY_OIDC_ISSUERS: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigValidationError);
    expect((thrown as Error).message).toMatch(problem);
  });
});

describe('bearerChallenge', () => {
  it('names invalid_token and the failed check in quotable ASCII, and is bare for other refusals', () => {
    expect(bearerChallenge(invalidToken('audience', `aud is not 'relay' — "x"`))).toBe(
      `Bearer realm="agentrelay", error="invalid_token", error_description="aud is not 'relay' ? 'x'"`,
    );
    expect(bearerChallenge(new RelayError('unauthenticated', 'Malformed API key'))).toBe('Bearer realm="agentrelay"');
  });
});
