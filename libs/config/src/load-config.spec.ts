import { IsInt, IsUrl, Max, Min } from 'class-validator';
import { CommonConfig, DatabaseServiceConfig } from './common.config';
import { ConfigValidationError, loadConfig } from './load-config';

class SampleConfig extends CommonConfig {
  @IsInt()
  @Min(1)
  @Max(65535)
  PORT: number = 8080;

  @IsUrl({ require_tld: false, require_protocol: true })
  PUBLIC_URL: string = 'http://127.0.0.1:8080';
}

describe('loadConfig', () => {
  it('applies local defaults when the environment is empty', () => {
    const config = loadConfig(SampleConfig, {});
    expect(config.PORT).toBe(8080);
    expect(config.NATS_URL).toBe('nats://127.0.0.1:4222');
    expect(config.LOG_LEVEL).toBe('info');
  });

  it('converts numbers and booleans from strings', () => {
    const config = loadConfig(DatabaseServiceConfig, { RELAY_MIGRATE_ON_START: 'false', NATS_REQUEST_TIMEOUT_MS: '2500' });
    expect(config.RELAY_MIGRATE_ON_START).toBe(false);
    expect(config.NATS_REQUEST_TIMEOUT_MS).toBe(2500);
  });

  it('treats empty values as unset', () => {
    expect(loadConfig(SampleConfig, { PORT: '' }).PORT).toBe(8080);
  });

  it('names every invalid key', () => {
    let thrown: unknown;
    try {
      loadConfig(SampleConfig, { PORT: '70000', NATS_URL: 'http://nats', LOG_LEVEL: 'loud' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigValidationError);
    const message = (thrown as Error).message;
    expect(message).toContain('PORT');
    expect(message).toContain('NATS_URL');
    expect(message).toContain('LOG_LEVEL');
  });

  it('rejects a database URL of another scheme', () => {
    expect(() => loadConfig(DatabaseServiceConfig, { DATABASE_URL: 'mysql://root@localhost/relay' })).toThrow(/DATABASE_URL/);
  });

  it('ignores keys it does not know', () => {
    expect(() => loadConfig(SampleConfig, { HOME: '/root', PATH: '/bin' })).not.toThrow();
  });
});
