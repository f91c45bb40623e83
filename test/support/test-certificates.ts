import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface TestCertificates {
  /** The CA that issued `server` and `client`. */
  ca: string;
  /** For an https server on 127.0.0.1. */
  server: KeyPair;
  /** A client identity the server accepts. */
  client: KeyPair;
  /** Another client identity from the same CA (a rotation). */
  rotatedClient: KeyPair;
  /** A client identity from a CA the server does not trust. */
  strangerClient: KeyPair;
}

/** A throwaway CA and certificates made with the `openssl` CLI (P-256 keys, valid for a day). */
export function issueTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'relay-certs-'));
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  const newCa = (name: string) => {
    openssl(
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
    );
  };
  const issue = (name: string, ca: string, extensions: string): KeyPair => {
    writeFileSync(join(dir, `${name}.ext`), extensions);
    openssl(
      'req',
      '-new',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.csr`,
      '-subj',
      `/CN=${name}`,
    );
    openssl(
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    );
    return { cert: read(`${name}.crt`), key: read(`${name}.key`) };
  };
  try {
    newCa('test-ca');
    newCa('stranger-ca');
    return {
      ca: read('test-ca.crt'),
      server: issue('upstream-server', 'test-ca', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'),
      client: issue('relay-client', 'test-ca', 'extendedKeyUsage=clientAuth\n'),
      rotatedClient: issue('relay-client-rotated', 'test-ca', 'extendedKeyUsage=clientAuth\n'),
      strangerClient: issue('stranger-client', 'stranger-ca', 'extendedKeyUsage=clientAuth\n'),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
