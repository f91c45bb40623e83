import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { ConfigValidationError, loadConfig } from '@app/config';
import { approverChannelsOf, NotifierConfig, slotShares } from './notifier.config';

const REQUIRED = {
  RELAY_SECRET_KEYS: 'test:dGVzdC1zZWNyZXQta2V5LTAxMjM0NTY3ODlhYmNkZWY=',
  RELAY_NOTIFIER_SEALING_KEYS: generateNotifierSealingKeyPair('test').sealingKey,
  RELAY_ASSERTION_SIGNING_KEY: generateAssertionKeyPair('test').signingKey,
};

describe('NotifierConfig: shares of the delivery slots', () => {
  it('gives each destination and owner a quarter of the slots by default, at least one', () => {
    expect(slotShares(loadConfig(NotifierConfig, REQUIRED))).toEqual({ perDestination: 4, perOwner: 4, perUpstream: 12 });
    expect(slotShares(loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_MAX_IN_FLIGHT: '3' }))).toEqual({
      perDestination: 1,
      perOwner: 1,
      perUpstream: 2,
    });
    expect(slotShares(loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_MAX_IN_FLIGHT: '64', RELAY_NOTIFIER_SLOTS_PER_DESTINATION: '' }))).toEqual({
      perDestination: 16,
      perOwner: 16,
      perUpstream: 48,
    });
  });

  it('takes configured shares, never more than all the slots', () => {
    const config = loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SLOTS_PER_DESTINATION: '32', RELAY_NOTIFIER_SLOTS_PER_OWNER: '2' });
    expect(slotShares(config)).toEqual({ perDestination: 16, perOwner: 2, perUpstream: 16 });
  });

  it('gives an upstream agent all slots but one destination share, and never less than a destination', () => {
    expect(slotShares(loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SLOTS_PER_DESTINATION: '2' })).perUpstream).toBe(14);
    expect(slotShares(loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SLOTS_PER_DESTINATION: '12' })).perUpstream).toBe(12);
  });

  it('refuses a share below one at boot, naming the key', () => {
    expect(() => loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SLOTS_PER_OWNER: '0' })).toThrow(ConfigValidationError);
    expect(() => loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SLOTS_PER_OWNER: '0' })).toThrow(/RELAY_NOTIFIER_SLOTS_PER_OWNER/);
  });
});

describe("NotifierConfig: the approvers' channels", () => {
  const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

  it('links each notice to the console under RELAY_PUBLIC_URL', () => {
    const config = loadConfig(NotifierConfig, {
      ...REQUIRED,
      RELAY_PUBLIC_URL: 'https://relay.acme.test/',
      RELAY_APPROVALS_WEBHOOK_URL: 'https://hooks.acme.test/approvals',
      RELAY_APPROVALS_WEBHOOK_SECRET: secret,
    });
    expect(approverChannelsOf(config)).toEqual({
      webhookUrl: 'https://hooks.acme.test/approvals',
      slackWebhookUrl: '',
      slackOrgOnly: false,
      consoleUrl: 'https://relay.acme.test/console',
    });
  });

  it('refuses an approvers webhook without its signing secret, naming the key', () => {
    expect(() => loadConfig(NotifierConfig, { ...REQUIRED, RELAY_APPROVALS_WEBHOOK_URL: 'https://hooks.acme.test/approvals' })).toThrow(
      /RELAY_APPROVALS_WEBHOOK_SECRET/,
    );
    expect(() => loadConfig(NotifierConfig, { ...REQUIRED, RELAY_APPROVALS_SLACK_WEBHOOK_URL: 'not a url' })).toThrow(/RELAY_APPROVALS_SLACK_WEBHOOK_URL/);
  });
});

describe('NotifierConfig: the key that opens what is sealed to the notifier', () => {
  it('is required, and a malformed one is refused naming its id, never quoting it', () => {
    expect(() => loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SEALING_KEYS: '' })).toThrow(/RELAY_NOTIFIER_SEALING_KEYS is required/);
    const problem = (() => {
      try {
        loadConfig(NotifierConfig, { ...REQUIRED, RELAY_NOTIFIER_SEALING_KEYS: 'old:dG9vLXNob3J0' });
        return '';
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(problem).toMatch(/RELAY_NOTIFIER_SEALING_KEYS key "old" must be 32 bytes/);
    expect(problem).not.toContain('dG9vLXNob3J0');
  });
});

describe('NotifierConfig: the key delivery assertions are signed with', () => {
  const problemOf = (env: Record<string, string>): string => {
    try {
      loadConfig(NotifierConfig, { ...REQUIRED, ...env });
      return '';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('is required, one key, and a malformed one is refused naming its id, never quoting it', () => {
    expect(problemOf({ RELAY_ASSERTION_SIGNING_KEY: '' })).toMatch(/RELAY_ASSERTION_SIGNING_KEY is required/);
    expect(problemOf({ RELAY_ASSERTION_SIGNING_KEY: 'old:dG9vLXNob3J0' })).toMatch(/RELAY_ASSERTION_SIGNING_KEY key "old" must be 32 bytes/);
    expect(problemOf({ RELAY_ASSERTION_SIGNING_KEY: 'old:dG9vLXNob3J0' })).not.toContain('dG9vLXNob3J0');
    const two = `${generateAssertionKeyPair('a').signingKey},${generateAssertionKeyPair('b').signingKey}`;
    expect(problemOf({ RELAY_ASSERTION_SIGNING_KEY: two })).toMatch(/holds one key/);
    // 32 bytes that are no P-256 private key (past the curve's order).
    const outOfRange = `big:${Buffer.alloc(32, 0xff).toString('base64url')}`;
    expect(problemOf({ RELAY_ASSERTION_SIGNING_KEY: outOfRange })).toMatch(/RELAY_ASSERTION_SIGNING_KEY key "big" is not a P-256 private key/);
    expect(problemOf({ RELAY_ASSERTION_SIGNING_KEY: outOfRange })).not.toContain(Buffer.alloc(32, 0xff).toString('base64url'));
  });

  it('keeps an assertion valid for 5 minutes unless told otherwise, within 30 s to an hour', () => {
    expect(loadConfig(NotifierConfig, REQUIRED).RELAY_ASSERTION_TTL_SECONDS).toBe(300);
    expect(problemOf({ RELAY_ASSERTION_TTL_SECONDS: '5' })).toMatch(/RELAY_ASSERTION_TTL_SECONDS/);
    expect(problemOf({ RELAY_ASSERTION_TTL_SECONDS: '7200' })).toMatch(/RELAY_ASSERTION_TTL_SECONDS/);
  });
});
