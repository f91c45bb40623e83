import { checkWebhookUrl, guardedLookup, isBlockedAddress, SsrfRefusedError } from './ssrf-guard';

function lookup(host: string, allowPrivate: boolean): Promise<{ error: Error | null; address: string }> {
  return new Promise((resolve) => {
    guardedLookup(allowPrivate)(host, { family: 0 }, (error, address) => resolve({ error, address: address as string }));
  });
}

describe('SSRF guard', () => {
  it.each(['127.0.0.1', '127.1.2.3', '10.0.0.5', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.1.1.1', '224.0.0.1'])(
    'blocks %s',
    (address) => {
      expect(isBlockedAddress(address)).toBe(true);
    },
  );

  it.each(['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows public %s', (address) => {
    expect(isBlockedAddress(address)).toBe(false);
  });

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost/hook',
    'http://[::1]/hook',
    'http://169.254.169.254/latest/meta-data',
    'http://metadata.google.internal/computeMetadata/v1',
    'http://10.1.2.3/',
    'ftp://example.com/hook',
    'http://user:pass@example.com/hook',
    'not a url',
  ])('refuses %s', (url) => {
    expect(() => checkWebhookUrl(url, false)).toThrow(SsrfRefusedError);
  });

  it('accepts public URLs, and private ones only when allowed', () => {
    expect(checkWebhookUrl('https://hooks.example.com/a?b=c', false).hostname).toBe('hooks.example.com');
    expect(checkWebhookUrl('http://127.0.0.1:8080/hook', true).port).toBe('8080');
    expect(() => checkWebhookUrl('file:///etc/passwd', true)).toThrow(SsrfRefusedError);
  });

  it('refuses a name that resolves to a private address at connect time', async () => {
    const refused = await lookup('localhost', false);
    expect(refused.error).toBeInstanceOf(SsrfRefusedError);
    const allowed = await lookup('localhost', true);
    expect(allowed.error).toBeNull();
    expect(isBlockedAddress(allowed.address)).toBe(true);
  });
});
