import type { NatsCredentials } from './nats-credentials';

/** The schemes a NATS server entry may name; a bare `host:port` is `nats://`. */
const SCHEMES = ['nats:', 'tls:'];
const NATS_DEFAULT_PORT = 4222;

/**
 * `NATS_URL` read once: the servers to try (credentials removed), the credentials the entries
 * carried (one set, passed to nats.js as options: it ignores credentials inside a server URL), and
 * a form safe to log.
 */
export interface NatsServers {
  servers: string[];
  user?: string;
  pass?: string;
  token?: string;
  /** The server list without any credential, for log lines and error messages. */
  printable: string;
  /** Credential files and TLS (NATS_CREDS_FILE, NATS_TLS_CA_FILE, …), when the config set them. */
  credentials?: NatsCredentials;
}

export class NatsServersError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NatsServersError';
  }
}

interface Credentials {
  user?: string;
  pass?: string;
  token?: string;
}

interface ParsedEntry {
  server: string;
  credentials?: Credentials;
}

function parseEntry(entry: string, position: number): ParsedEntry {
  const named = `entry ${position}`;
  if (entry === '') throw new NatsServersError(`NATS_URL ${named} is empty (servers are separated by single commas)`);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(entry)?.[1]?.toLowerCase();
  let url: URL;
  try {
    url = new URL(scheme ? entry : `nats://${entry}`);
  } catch {
    throw new NatsServersError(`NATS_URL ${named} (${withoutCredentials(entry)}) is not a server address (nats://host:port or host:port)`);
  }
  const printable = `${url.protocol}//${url.host}`;
  if (url.protocol === 'ws:' || url.protocol === 'wss:') {
    throw new NatsServersError(`NATS_URL ${named} (${printable}) is a websocket URL; the relay connects with nats:// or tls://`);
  }
  if (!SCHEMES.includes(url.protocol)) throw new NatsServersError(`NATS_URL ${named} (${printable}) must be nats://, tls:// or host:port`);
  if (url.hostname === '') throw new NatsServersError(`NATS_URL ${named} (${printable}) names no host`);
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
    throw new NatsServersError(`NATS_URL ${named} (${printable}) has a path or query; a server is only scheme://host:port`);
  }
  const server = `${url.protocol}//${url.hostname}:${url.port || NATS_DEFAULT_PORT}`;
  if (url.username === '' && url.password === '') return { server };
  const user = decodeURIComponent(url.username);
  const pass = decodeURIComponent(url.password);
  return { server, credentials: url.password === '' ? { token: user } : { user, pass } };
}

/** The entry with everything up to its last `@` (a user, password or token) replaced, for messages. */
function withoutCredentials(entry: string): string {
  const at = entry.lastIndexOf('@');
  if (at < 0) return entry;
  const scheme = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//.exec(entry)?.[0] ?? '';
  return `${scheme}***@${entry.slice(at + 1)}`;
}

function sameCredentials(a: Credentials, b: Credentials): boolean {
  return a.user === b.user && a.pass === b.pass && a.token === b.token;
}

/**
 * Reads `NATS_URL`: one server or several separated by commas (spaces around them allowed), each
 * `nats://host:port`, `tls://host:port` or a bare `host:port` (port 4222 when left out). Entries may
 * carry `user:pass@` or `token@`; when several do, they must carry the same. A bad entry throws a
 * NatsServersError naming it by position, without its credentials.
 */
export function parseNatsServers(value: string): NatsServers {
  const entries = value.split(',').map((entry) => entry.trim());
  const parsed = entries.map((entry, index) => parseEntry(entry, index + 1));
  let credentials: Credentials | undefined;
  for (const [index, entry] of parsed.entries()) {
    if (!entry.credentials) continue;
    if (credentials && !sameCredentials(credentials, entry.credentials)) {
      throw new NatsServersError(`NATS_URL entry ${index + 1} (${entry.server}) carries other credentials than an earlier entry; one connection has one set`);
    }
    credentials = entry.credentials;
  }
  const servers = parsed.map((entry) => entry.server);
  return { servers, ...credentials, printable: servers.join(', ') };
}
