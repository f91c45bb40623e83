import { AllowedNetworks, checkWebhookUrl, embeddedIpv4, guardedLookup, isBlockedAddress, SsrfRefusedError, type PrivateTargets } from './ssrf-guard';

function lookup(host: string, allowPrivate: PrivateTargets): Promise<{ error: Error | null; address: string }> {
  return new Promise((resolve) => {
    guardedLookup(allowPrivate)(host, { family: 0 }, (error, address) => resolve({ error, address: address as string }));
  });
}

describe('SSRF guard', () => {
  it.each([
    '127.0.0.1',
    '127.1.2.3',
    '10.0.0.5',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:10.1.1.1',
    '224.0.0.1',
    '192.0.2.10',
    '198.51.100.7',
    '203.0.113.200',
    '198.18.0.1',
    '198.19.255.254',
    '100.127.255.255',
    'fec0::1',
    'feff:ffff::1',
    '2001:db8::1',
    '2001:db8:ffff::1',
    '3fff::1',
    '2001:2::1',
    '::ffff:203.0.113.5',
  ])('blocks %s', (address) => {
    expect(isBlockedAddress(address)).toBe(true);
  });

  describe('IPv6 forms that embed an IPv4 address', () => {
    it.each([
      ['IPv4-compatible', '::127.0.0.1'],
      ['IPv4-compatible, hex', '::7f00:1'],
      ['IPv4-compatible private', '::10.0.0.1'],
      ['IPv4-mapped, hex', '::ffff:7f00:1'],
      ['IPv4-mapped, expanded', '0:0:0:0:0:ffff:a9fe:a9fe'],
      ['IPv4-mapped metadata', '::ffff:169.254.169.254'],
      ['IPv4-translated', '::ffff:0:127.0.0.1'],
      ['IPv4-translated, hex', '::ffff:0:a00:1'],
      ['NAT64', '64:ff9b::127.0.0.1'],
      ['NAT64 metadata, hex', '64:ff9b::a9fe:a9fe'],
      ['local-use NAT64', '64:ff9b:1::8.8.8.8'],
      ['6to4 of loopback', '2002:7f00:1::'],
      ['6to4 of a private address', '2002:c0a8:101::1'],
      ['6to4 of the metadata address', '2002:a9fe:a9fe:0:0:0:0:1'],
      ['Teredo with a private client', '2001:0:4136:e378:8000:63bf:f5ff:fffe'],
      ['Teredo with a loopback client', '2001::80ff:fffe'],
      ['Teredo with a private server', '2001:0:a00:1::'],
      ['a zone id', 'fe80::1%eth0'],
    ])('blocks %s (%s)', (_form, address) => {
      expect(isBlockedAddress(address)).toBe(true);
    });

    it.each(['::8.8.8.8', '::ffff:808:808', '::ffff:0:8.8.8.8', '64:ff9b::8.8.8.8', '2002:808:808::1', '2001:0:4136:e378:8000:63bf:f7f7:f7f7'])(
      'allows %s, which embeds a public address',
      (address) => {
        expect(isBlockedAddress(address)).toBe(false);
      },
    );

    it('decodes each form', () => {
      expect(embeddedIpv4('::ffff:7f00:1')).toEqual(['127.0.0.1']);
      expect(embeddedIpv4('::ffff:0:a.b.c.d'.replace('a.b.c.d', '10.1.2.3'))).toEqual(['10.1.2.3']);
      expect(embeddedIpv4('64:ff9b::c0a8:101')).toEqual(['192.168.1.1']);
      expect(embeddedIpv4('2002:c0a8:101::')).toEqual(['192.168.1.1']);
      expect(embeddedIpv4('2001:0:4136:e378:8000:63bf:3fff:fdd2')).toEqual(['65.54.227.120', '192.0.2.45']);
      expect(embeddedIpv4('2606:4700:4700::1111')).toEqual([]);
    });

    it.each([
      'http://[::127.0.0.1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:0:127.0.0.1]/',
      'http://[64:ff9b::169.254.169.254]/',
      'http://[64:ff9b:1::1]/',
      'http://[2002:7f00:1::]/',
      'http://[2001::80ff:fffe]/',
    ])('refuses the URL %s before any connection', (url) => {
      expect(() => checkWebhookUrl(url, false)).toThrow(SsrfRefusedError);
    });
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '192.0.3.1',
    '198.51.101.1',
    '203.0.114.1',
    '198.20.0.1',
    '100.128.0.1',
    '2001:db9::1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
  ])('allows public %s', (address) => {
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

describe('an allowlist of private networks and hosts (RELAY_UPSTREAM_ALLOWED_NETWORKS)', () => {
  const SETTING = 'RELAY_UPSTREAM_ALLOWED_NETWORKS';
  const allowed = AllowedNetworks.parse(' 10.20.0.0/16, fd00:1::/32 ,127.0.0.1,planner.internal, *.corp.example ', SETTING);

  it.each([
    'http://10.20.3.4:9000/card',
    'http://127.0.0.1:8080/.well-known/agent-card.json',
    'http://[fd00:1::5]/',
    'http://[::ffff:10.20.0.1]/',
    'https://planner.internal/.well-known/agent-card.json',
    'https://PLANNER.internal./a2a',
    'https://a.b.corp.example/a2a',
  ])('lets %s through', (url) => {
    expect(() => checkWebhookUrl(url, allowed)).not.toThrow();
  });

  it.each([
    ['http://10.21.0.1/', 'address 10.21.0.1'],
    ['http://127.0.0.2/', 'address 127.0.0.2'],
    ['http://169.254.169.254/latest/meta-data', 'address 169.254.169.254'],
    ['http://[::1]/', 'address ::1'],
  ])('refuses %s, naming the setting', (url, what) => {
    expect(() => checkWebhookUrl(url, allowed)).toThrow(`${what} is not allowed: it is loopback, private or reserved and not in ${SETTING}`);
  });

  it('refuses a blocked name while nothing is listed, naming the setting', () => {
    expect(() => checkWebhookUrl('http://localhost/', AllowedNetworks.parse('', SETTING))).toThrow(
      `host localhost is not allowed: it is loopback, private or reserved and not in ${SETTING}`,
    );
    expect(() => checkWebhookUrl('http://127.0.0.1/', AllowedNetworks.parse('', SETTING))).toThrow(`not in ${SETTING}`);
  });

  it('judges a blocked name by the addresses it resolves to once networks are listed', async () => {
    expect(() => checkWebhookUrl('http://localhost:8080/', allowed)).not.toThrow();
    const resolved = await lookup('localhost', allowed);
    expect(resolved.error).toBeNull();
    expect(resolved.address).toBe('127.0.0.1');
    const refused = await lookup('localhost', AllowedNetworks.parse('10.0.0.0/8', SETTING));
    expect(refused.error?.message).toBe(`localhost resolves to a private or reserved address not in ${SETTING}`);
  });

  it('lets a listed host name resolve to any address', async () => {
    const resolved = await lookup('localhost', AllowedNetworks.parse('localhost', SETTING));
    expect(resolved.error).toBeNull();
    expect(isBlockedAddress(resolved.address)).toBe(true);
  });

  it('says when a network covers a whole family, the guard off', () => {
    expect(allowed.coversEverything).toBe(false);
    expect(AllowedNetworks.parse('0.0.0.0/0', SETTING).coversEverything).toBe(true);
    expect(AllowedNetworks.parse('::/0', SETTING).coversEverything).toBe(true);
  });

  it.each(['10.0.0.0/33', '::1/129', '10.0.0.0/8/1', 'http://planner.internal', 'planner.internal:8080', '*', '*.', '10.0.0.0/x', 'a..b'])(
    'refuses the entry %s, naming the setting and the entry',
    (entry) => {
      expect(() => AllowedNetworks.parse(`127.0.0.1,${entry}`, SETTING)).toThrow(
        `${SETTING}: ${JSON.stringify(entry)} is not an IP address, a CIDR network, a host name or *.domain`,
      );
    },
  );
});
