import { readFileSync } from 'node:fs';
import {
  credsAuthenticator,
  nkeyAuthenticator,
  tokenAuthenticator,
  usernamePasswordAuthenticator,
  type Authenticator,
  type ConnectionOptions,
} from '@nats-io/transport-node';
import { parseNatsServers, type NatsCredentials, type NatsServers } from '@app/config';

type RelayConnectionOptions = Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token' | 'authenticator' | 'tls' | 'inboxPrefix'>;

/** The file's text without surrounding whitespace, read now (at every connect, so a rotated file is used). */
function fileText(path: string): string {
  return readFileSync(path, 'utf8').trim();
}

/** The authenticator of the credential files set, or none; files are read at every (re)connect. */
function authenticatorOf(credentials: NatsCredentials | undefined): Authenticator | undefined {
  if (!credentials) return undefined;
  const { credsFile, nkeySeedFile, user, passwordFile, tokenFile } = credentials;
  // Whole, as written: the creds parser needs the newline after each armour line.
  if (credsFile) return credsAuthenticator(() => new Uint8Array(readFileSync(credsFile)));
  if (nkeySeedFile) return nkeyAuthenticator(() => new TextEncoder().encode(fileText(nkeySeedFile)));
  if (user && passwordFile) return usernamePasswordAuthenticator(user, () => fileText(passwordFile));
  if (tokenFile) return tokenAuthenticator(() => fileText(tokenFile));
  return undefined;
}

/**
 * What nats.js needs to reach a NATS_URL as one relay process: every server listed, the
 * credentials (in the URL, or the files NATS_CREDS_FILE, NATS_NKEY_SEED_FILE, NATS_USER +
 * NATS_PASSWORD_FILE or NATS_TOKEN_FILE name), TLS when a CA or client certificate is set, and the
 * inbox prefix its permissions allow it to read replies on.
 */
export function natsConnectOptions(natsUrl: string | NatsServers, inboxPrefix?: string): RelayConnectionOptions {
  const { servers, user, pass, token, credentials } = typeof natsUrl === 'string' ? parseNatsServers(natsUrl) : natsUrl;
  const authenticator = authenticatorOf(credentials);
  const tls = credentials?.tls ? { caFile: credentials.tls.caFile, certFile: credentials.tls.certFile, keyFile: credentials.tls.keyFile } : undefined;
  return {
    servers,
    ...(authenticator ? { authenticator } : { user, pass, token }),
    ...(tls ? { tls } : {}),
    ...(inboxPrefix ? { inboxPrefix } : {}),
  };
}
