import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { ConfigValidationError, loadConfig } from '@app/config';
import { EdgeConfig } from './edge.config';

/** What EdgeConfig requires beside the values a test sets. */
const EDGE_REQUIRED = {
  RELAY_NOTIFIER_PUBLIC_KEY: generateNotifierSealingKeyPair('test').publicKey,
  RELAY_ASSERTION_PUBLIC_KEYS: generateAssertionKeyPair('test').publicKey,
};

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(EdgeConfig, { ...EDGE_REQUIRED, ...env });
    return [];
  } catch (error) {
    if (error instanceof ConfigValidationError) return error.problems;
    throw error;
  }
}

describe('edge config: console sign-in through OIDC', () => {
  it('is off by default, with the role claim agentrelay_role and the groups claim groups', () => {
    const config = loadConfig(EdgeConfig, EDGE_REQUIRED);
    expect(config.RELAY_CONSOLE_OIDC_ISSUER).toBeUndefined();
    expect(config.RELAY_CONSOLE_OIDC_ROLE_CLAIM).toBe('agentrelay_role');
    expect(config.RELAY_CONSOLE_OIDC_GROUPS_CLAIM).toBe('groups');
    expect(config.RELAY_CONSOLE_OIDC_GROUP_ROLES).toEqual({});
    expect(config.RELAY_CONSOLE_OIDC_SCOPES).toBe('profile email');
  });

  it('reads the group mapping from JSON', () => {
    const config = loadConfig(EdgeConfig, {
      ...EDGE_REQUIRED,
      RELAY_CONSOLE_OIDC_ISSUER: 'https://idp.example.com',
      RELAY_CONSOLE_OIDC_CLIENT_ID: 'console',
      RELAY_CONSOLE_OIDC_GROUP_ROLES: '{"relay-admins":"admin","auditors":"auditor"}',
    });
    expect(config.RELAY_CONSOLE_OIDC_GROUP_ROLES).toEqual({ 'relay-admins': 'admin', auditors: 'auditor' });
  });

  it('names the setting that is wrong: no client id, a mapping that is not JSON or names no role, a bad issuer', () => {
    expect(problemsOf({ RELAY_CONSOLE_OIDC_ISSUER: 'https://idp.example.com' })).toEqual([
      expect.stringContaining('RELAY_CONSOLE_OIDC_CLIENT_ID is needed with RELAY_CONSOLE_OIDC_ISSUER'),
    ]);
    for (const mapping of ['{relay-admins: admin}', '{"relay-admins":"root"}', '["admin"]', '{"":"admin"}']) {
      expect([mapping, problemsOf({ RELAY_CONSOLE_OIDC_GROUP_ROLES: mapping })]).toEqual([
        mapping,
        [
          expect.stringContaining(
            'RELAY_CONSOLE_OIDC_GROUP_ROLES must be a JSON object of group names to roles (admin, operator, approver, viewer or auditor), relay-wide or as org:role',
          ),
        ],
      ]);
    }
    expect(problemsOf({ RELAY_CONSOLE_OIDC_ISSUER: 'not a url', RELAY_CONSOLE_OIDC_CLIENT_ID: 'console' })).toEqual([
      expect.stringContaining('RELAY_CONSOLE_OIDC_ISSUER must be an http(s) URL'),
    ]);
  });
});

describe('edge config: the notifier’s public key', () => {
  it('is required: the edge sends the notifier no secret it has not sealed', () => {
    expect(problemsOf({ RELAY_NOTIFIER_PUBLIC_KEY: '' }).join('\n')).toMatch(/RELAY_NOTIFIER_PUBLIC_KEY is required/);
    expect(problemsOf({ RELAY_NOTIFIER_PUBLIC_KEY: 'k:not-a-key' }).join('\n')).toMatch(/RELAY_NOTIFIER_PUBLIC_KEY key "k" must be 32 bytes/);
  });
});

describe('edge config: the published keys of delivery assertions', () => {
  it('is required, each key named and checked, none twice', () => {
    expect(problemsOf({ RELAY_ASSERTION_PUBLIC_KEYS: '' }).join('\n')).toMatch(/RELAY_ASSERTION_PUBLIC_KEYS is required/);
    expect(problemsOf({ RELAY_ASSERTION_PUBLIC_KEYS: 'k:not-a-key' }).join('\n')).toMatch(/RELAY_ASSERTION_PUBLIC_KEYS key "k" must be 65 bytes/);
    const key = generateAssertionKeyPair('k').publicKey;
    expect(problemsOf({ RELAY_ASSERTION_PUBLIC_KEYS: `${key},${key}` }).join('\n')).toMatch(/names key "k" twice/);
    // 65 bytes that are no point of the curve.
    expect(
      problemsOf({ RELAY_ASSERTION_PUBLIC_KEYS: `off:${Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 1)]).toString('base64url')}` }).join('\n'),
    ).toMatch(/key "off" is not a P-256 public key/);
    expect(problemsOf({ RELAY_ASSERTION_PUBLIC_KEYS: `${key},${generateAssertionKeyPair('next').publicKey}` })).toEqual([]);
  });
});
