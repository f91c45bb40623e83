import { checkApprovalsSlackUrl } from './approvals-slack-url';

describe('an org’s approvals Slack URL (checkApprovalsSlackUrl)', () => {
  it('takes a public https URL and gives its host', () => {
    expect(checkApprovalsSlackUrl('https://hooks.slack.com/services/T0/B0/abc', false).host).toBe('hooks.slack.com');
  });

  it('refuses http, credentials, other schemes and blocked addresses while the guard is on', () => {
    for (const url of [
      'http://hooks.slack.com/services/T0/B0/abc',
      'https://user:pass@hooks.slack.com/x',
      'ftp://hooks.slack.com/x',
      'https://127.0.0.1/x',
      'https://169.254.169.254/latest',
      'https://localhost/x',
      'https://10.1.2.3/x',
      'not a url',
    ]) {
      expect(() => checkApprovalsSlackUrl(url, false)).toThrow();
    }
  });

  it('takes http only to a loopback address while the guard is off', () => {
    expect(checkApprovalsSlackUrl('http://127.0.0.1:8080/slack', true).port).toBe('8080');
    expect(checkApprovalsSlackUrl('http://[::1]:8080/slack', true).hostname).toBe('[::1]');
    expect(checkApprovalsSlackUrl('https://10.1.2.3/x', true).host).toBe('10.1.2.3');
    expect(() => checkApprovalsSlackUrl('http://10.1.2.3/x', true)).toThrow(/https/);
    expect(() => checkApprovalsSlackUrl('http://hooks.slack.com/x', true)).toThrow(/https/);
  });
});
