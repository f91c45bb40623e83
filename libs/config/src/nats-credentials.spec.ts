import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommonConfig } from './common.config';
import { ConfigValidationError, loadConfig } from './load-config';

describe('NATS credential settings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'nats-credentials-spec-'));
  const seed = join(dir, 'edge.nk');
  const password = join(dir, 'password');
  writeFileSync(seed, 'SUAEXAMPLE\n');
  writeFileSync(password, 'secret\n');

  it('takes one way and hands it to the connection with the servers', () => {
    const config = loadConfig(CommonConfig, { NATS_URL: 'tls://nats:4222', NATS_NKEY_SEED_FILE: seed, NATS_TLS_CA_FILE: seed });
    expect(config.natsServers).toMatchObject({ servers: ['tls://nats:4222'], credentials: { nkeySeedFile: seed, tls: { caFile: seed } } });
  });

  it.each([
    [{ NATS_NKEY_SEED_FILE: seed, NATS_CREDS_FILE: seed }, /more than one way \(NATS_CREDS_FILE, NATS_NKEY_SEED_FILE\)/],
    [{ NATS_URL: 'nats://u:p@nats:4222', NATS_NKEY_SEED_FILE: seed }, /more than one way \(NATS_NKEY_SEED_FILE, NATS_URL\)/],
    [{ NATS_USER: 'edge' }, /NATS_USER needs NATS_PASSWORD_FILE/],
    [{ NATS_PASSWORD_FILE: password }, /NATS_PASSWORD_FILE needs NATS_USER/],
    [{ NATS_TLS_CERT_FILE: seed }, /NATS_TLS_CERT_FILE and NATS_TLS_KEY_FILE are set together/],
    [{ NATS_NKEY_SEED_FILE: join(dir, 'missing.nk') }, /NATS_NKEY_SEED_FILE names .*missing\.nk, which this process cannot read/],
  ])('refuses %j naming the problem', (env, message) => {
    expect(() => loadConfig(CommonConfig, env)).toThrow(ConfigValidationError);
    expect(() => loadConfig(CommonConfig, env)).toThrow(message);
  });

  it('keeps a password out of the printable server list', () => {
    const config = loadConfig(CommonConfig, { NATS_USER: 'edge', NATS_PASSWORD_FILE: password });
    expect(config.natsServers.printable).toBe('nats://127.0.0.1:4222');
    expect(JSON.stringify(config.natsServers)).not.toContain('secret');
  });
});
