import { accessSync, constants } from 'node:fs';
import { ValidateBy } from 'class-validator';

/**
 * How a relay process proves itself to NATS, read from files so that Kubernetes secrets (or
 * compose secrets) mount them, and read again at every (re)connect so that a rotated file is
 * taken without a restart. At most one way is set; TLS goes with any of them.
 */
export interface NatsCredentials {
  /** A `.creds` file (decentralized auth: user JWT + nkey seed), as `nsc` writes it. */
  credsFile?: string;
  /** A file holding a user nkey seed (`SU…`), for servers that list users by nkey. */
  nkeySeedFile?: string;
  /** A user name, with its password read from `passwordFile`. */
  user?: string;
  passwordFile?: string;
  /** A file holding a token, for servers with one `authorization { token }`. */
  tokenFile?: string;
  tls?: NatsTls;
}

export interface NatsTls {
  /** The CA that signed the server's certificate (the server is always verified with TLS on). */
  caFile?: string;
  /** A client certificate and its key, for servers that verify clients. */
  certFile?: string;
  keyFile?: string;
}

/** The settings each credential way is read from, for messages. */
export const NATS_CREDENTIAL_SETTINGS = ['NATS_CREDS_FILE', 'NATS_NKEY_SEED_FILE', 'NATS_USER', 'NATS_TOKEN_FILE'] as const;

interface NatsCredentialKeys {
  NATS_URL?: string;
  NATS_CREDS_FILE?: string;
  NATS_NKEY_SEED_FILE?: string;
  NATS_USER?: string;
  NATS_PASSWORD_FILE?: string;
  NATS_TOKEN_FILE?: string;
  NATS_TLS_CA_FILE?: string;
  NATS_TLS_CERT_FILE?: string;
  NATS_TLS_KEY_FILE?: string;
}

/** What is wrong with the NATS credential settings taken together, or null. */
export function natsCredentialProblem(keys: NatsCredentialKeys, urlCarriesCredentials: boolean): string | null {
  const ways = NATS_CREDENTIAL_SETTINGS.filter((setting) => Boolean(keys[setting]));
  if (urlCarriesCredentials) ways.push('NATS_URL' as never);
  if (ways.length > 1) return `NATS credentials are set in more than one way (${ways.join(', ')}); a connection uses one`;
  if (keys.NATS_USER && !keys.NATS_PASSWORD_FILE) return 'NATS_USER needs NATS_PASSWORD_FILE (a file holding the password)';
  if (keys.NATS_PASSWORD_FILE && !keys.NATS_USER) return 'NATS_PASSWORD_FILE needs NATS_USER';
  if (Boolean(keys.NATS_TLS_CERT_FILE) !== Boolean(keys.NATS_TLS_KEY_FILE))
    return 'NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE are set together (a client certificate and its key)';
  return null;
}

/** A setting naming a file this process can read; the message names the setting and the path. */
export function IsReadableFile(): PropertyDecorator {
  return ValidateBy({
    name: 'isReadableFile',
    validator: {
      validate: (value) => {
        if (typeof value !== 'string' || value === '') return false;
        try {
          accessSync(value, constants.R_OK);
          return true;
        } catch {
          return false;
        }
      },
      defaultMessage: (args) => `${args?.property} names ${String(args?.value)}, which this process cannot read`,
    },
  });
}
