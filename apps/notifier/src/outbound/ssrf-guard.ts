import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** Addresses a webhook may not reach unless private targets are allowed. */
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, cloud metadata (169.254.169.254)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // documentation (TEST-NET-1)
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // documentation (TEST-NET-2)
  ['203.0.113.0', 24], // documentation (TEST-NET-3)
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['100::', 64], // discard-only
  ['2001:2::', 48], // benchmarking
  ['2001:db8::', 32], // documentation
  ['3fff::', 20], // documentation (RFC 9637)
  ['fc00::', 7], // unique local (includes fd00:ec2::254, a metadata address)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed inside some sites)
  ['ff00::', 8], // multicast
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): a private translator
] as const) {
  BLOCKED.addSubnet(network, prefix, 'ipv6');
}

const BLOCKED_HOSTNAMES = new Set(['localhost', 'metadata', 'metadata.google.internal', 'instance-data', 'instance-data.ec2.internal']);

export class SsrfRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SsrfRefusedError';
  }
}

/** The eight 16-bit groups of a valid IPv6 address (a zone id is ignored). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0].toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number);
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const zeros = tail === undefined ? [] : new Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...zeros, ...tailGroups].map((group) => parseInt(group, 16));
}

function ipv4Of(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The IPv4 addresses an IPv6 address carries, which is where a packet to it may end up:
 * IPv4-compatible (`::a.b.c.d`), IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
 * (`::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and Teredo
 * (`2001:0:<server>::<client XOR ffff:ffff>`).
 */
export function embeddedIpv4(address: string): string[] {
  const groups = ipv6Groups(address);
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups;
  const zeroUpTo = (end: number): boolean => groups.slice(0, end).every((group) => group === 0);
  if (zeroUpTo(5) && (g5 === 0 || g5 === 0xffff)) return [ipv4Of(g6, g7)];
  if (zeroUpTo(4) && g4 === 0xffff && g5 === 0) return [ipv4Of(g6, g7)];
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return [ipv4Of(g6, g7)];
  if (g0 === 0x2002) return [ipv4Of(g1, g2)];
  if (g0 === 0x2001 && g1 === 0) return [ipv4Of(g2, g3), ipv4Of(g6 ^ 0xffff, g7 ^ 0xffff)];
  return [];
}

/** Whether an IP address is loopback, private, link-local, metadata or otherwise not public. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    if (BLOCKED.check(address.split('%')[0], 'ipv6')) return true;
    return embeddedIpv4(address).some((ipv4) => BLOCKED.check(ipv4, 'ipv4'));
  }
  return true;
}

/**
 * Hosts and networks one kind of outbound request may reach although the guard blocks them (an
 * operator's allowlist, e.g. RELAY_UPSTREAM_ALLOWED_NETWORKS): IP addresses and CIDR networks
 * (`10.0.0.0/8`, `fd00::/8`, `127.0.0.1`), host names (`planner.internal`, whatever it resolves to)
 * and subdomain wildcards (`*.corp.example`). A refusal names `setting`.
 */
export class AllowedNetworks {
  private readonly networks = new BlockList();
  private readonly hosts = new Set<string>();
  private readonly domains: string[] = [];
  /** The entries as written (for the start log). */
  readonly entries: string[] = [];
  /** Whether a listed network is a whole address family (0.0.0.0/0, ::/0): the guard is off for it. */
  coversEverything = false;

  private constructor(readonly setting: string) {}

  /** Parses a comma-separated list; throws an Error naming the setting and the entry that is none of the forms. */
  static parse(list: string, setting: string): AllowedNetworks {
    const allowed = new AllowedNetworks(setting);
    for (const entry of list
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean)) {
      allowed.add(entry);
    }
    return allowed;
  }

  get isEmpty(): boolean {
    return this.entries.length === 0;
  }

  /** A host name listed itself or under a listed wildcard. */
  allowsHost(hostname: string): boolean {
    const host = normalizedHost(hostname);
    return this.hosts.has(host) || this.domains.some((domain) => host.endsWith(`.${domain}`));
  }

  /** An address inside a listed network (an IPv6 form that carries IPv4 addresses: when each of them is listed or public). */
  allowsAddress(address: string): boolean {
    const family = isIP(address);
    if (family === 4) return this.networks.check(address, 'ipv4');
    if (family !== 6) return false;
    const bare = address.split('%')[0];
    if (this.networks.check(bare, 'ipv6')) return true;
    const carried = embeddedIpv4(bare);
    return carried.length > 0 && !BLOCKED.check(bare, 'ipv6') && carried.every((ipv4) => !BLOCKED.check(ipv4, 'ipv4') || this.networks.check(ipv4, 'ipv4'));
  }

  private add(entry: string): void {
    const [network, prefixText, ...rest] = entry.split('/');
    const family = isIP(network.replace(/^\[|\]$/g, ''));
    if (family !== 0) {
      const address = network.replace(/^\[|\]$/g, '');
      const bits = family === 4 ? 32 : 128;
      const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
      if (rest.length > 0 || !(prefix >= 0 && prefix <= bits)) throw this.invalid(entry, `the prefix length must be 0 to ${bits}`);
      this.networks.addSubnet(address, prefix, family === 4 ? 'ipv4' : 'ipv6');
      if (prefix === 0) this.coversEverything = true;
    } else {
      const host = normalizedHost(entry);
      const wildcard = host.startsWith('*.');
      const name = wildcard ? host.slice(2) : host;
      if (prefixText !== undefined || !HOST_NAME.test(name)) throw this.invalid(entry);
      if (wildcard) this.domains.push(name);
      else this.hosts.add(name);
    }
    this.entries.push(entry);
  }

  private invalid(entry: string, why?: string): Error {
    return new Error(
      `${this.setting}: ${JSON.stringify(entry)} is not an IP address, a CIDR network, a host name or *.domain${why ? ` (${why})` : ''}; e.g. 10.0.0.0/8,fd00::/8,planner.internal,*.corp.example`,
    );
  }
}

/** Letters, digits, hyphens and underscores in dot-separated labels (no scheme, port or path). */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*$/;

function normalizedHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .toLowerCase()
    .replace(/\.$/, '');
}

/**
 * What the guard lets a kind of request reach beyond public addresses: nothing (`false`), everything
 * (`true`, the guard off: tests), or an allowlist.
 */
export type PrivateTargets = boolean | AllowedNetworks;

function refusal(what: string, allowPrivate: PrivateTargets): SsrfRefusedError {
  if (allowPrivate instanceof AllowedNetworks) {
    return new SsrfRefusedError(`${what} is not allowed: it is loopback, private or reserved and not in ${allowPrivate.setting}`);
  }
  return new SsrfRefusedError(`${what} is not allowed`);
}

/** Whether the guard lets a request reach `address`. */
function permitted(address: string, allowPrivate: PrivateTargets): boolean {
  if (allowPrivate === true || !isBlockedAddress(address)) return true;
  return allowPrivate instanceof AllowedNetworks && allowPrivate.allowsAddress(address);
}

/**
 * Checks a target URL before any connection: http(s) only, no credentials in it, no blocked
 * hostname or literal address (unless `allowPrivate` allows it). Names are checked again, after
 * resolution, by `guardedLookup`.
 */
export function checkWebhookUrl(url: string, allowPrivate: PrivateTargets): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new SsrfRefusedError('invalid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new SsrfRefusedError(`scheme ${parsed.protocol} is not allowed`);
  if (parsed.username || parsed.password) throw new SsrfRefusedError('credentials in the URL are not allowed');
  if (allowPrivate === true) return parsed;
  const host = normalizedHost(parsed.hostname);
  if (isIP(host)) {
    if (!permitted(host, allowPrivate)) throw refusal(`address ${host}`, allowPrivate);
    return parsed;
  }
  if (allowPrivate instanceof AllowedNetworks && allowPrivate.allowsHost(host)) return parsed;
  // With networks allowed, such a name is judged by the addresses it resolves to (at connect time).
  const listsNetworks = allowPrivate instanceof AllowedNetworks && !allowPrivate.isEmpty;
  if (!listsNetworks && (BLOCKED_HOSTNAMES.has(host) || host.endsWith('.localhost') || host.endsWith('.internal'))) {
    throw refusal(`host ${host}`, allowPrivate);
  }
  return parsed;
}

/**
 * A DNS lookup for outbound requests that refuses blocked addresses at connect time (unless
 * `allowPrivate` allows them), so a name that resolves (or re-resolves) to an internal address is never reached.
 */
export function guardedLookup(allowPrivate: PrivateTargets): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, '', 0);
      const list = addresses as LookupAddress[];
      const anyAddress = allowPrivate === true || (allowPrivate instanceof AllowedNetworks && allowPrivate.allowsHost(hostname));
      const allowed = anyAddress ? list : list.filter((entry) => permitted(entry.address, allowPrivate));
      if (allowed.length === 0) {
        const setting = allowPrivate instanceof AllowedNetworks ? ` not in ${allowPrivate.setting}` : '';
        return callback(new SsrfRefusedError(`${hostname} resolves to a private or reserved address${setting}`), '', 0);
      }
      if (options.all) return (callback as unknown as (err: null, addresses: LookupAddress[]) => void)(null, allowed);
      return callback(null, allowed[0].address, allowed[0].family);
    });
  };
}
