import { CommonConfig } from './common.config';
import { ConfigValidationError, loadConfig } from './load-config';
import { NatsServersError, parseNatsServers } from './nats-servers';

function refusal(value: string): string {
  try {
    parseNatsServers(value);
  } catch (error) {
    expect(error).toBeInstanceOf(NatsServersError);
    return (error as Error).message;
  }
  throw new Error(`${value} was accepted`);
}

describe('parseNatsServers', () => {
  it('reads one server', () => {
    expect(parseNatsServers('nats://127.0.0.1:4222')).toEqual({ servers: ['nats://127.0.0.1:4222'], printable: 'nats://127.0.0.1:4222' });
  });

  it('reads a comma-separated list in order, with spaces around the commas', () => {
    const { servers } = parseNatsServers(' nats://nats-0:4222 ,nats://nats-1:4223,\tnats-2:4224 ');
    expect(servers).toEqual(['nats://nats-0:4222', 'nats://nats-1:4223', 'nats://nats-2:4224']);
  });

  it('takes a bare host:port as nats:// and a missing port as 4222', () => {
    expect(parseNatsServers('10.0.0.7:5222,nats.example.com').servers).toEqual(['nats://10.0.0.7:5222', 'nats://nats.example.com:4222']);
  });

  it('keeps tls:// (any case) and IPv6 addresses', () => {
    expect(parseNatsServers('tls://[::1]:4443,TLS://Nats.Example.com:4222').servers).toEqual(['tls://[::1]:4443', 'tls://Nats.Example.com:4222']);
  });

  it('takes user and password out of the servers, and keeps them out of the printable form', () => {
    const parsed = parseNatsServers('nats://relay:s3cr%40t@nats-0:4222,nats://relay:s3cr%40t@nats-1:4222');
    expect(parsed.servers).toEqual(['nats://nats-0:4222', 'nats://nats-1:4222']);
    expect(parsed).toMatchObject({ user: 'relay', pass: 's3cr@t' });
    expect(parsed.printable).toBe('nats://nats-0:4222, nats://nats-1:4222');
    expect(parsed.printable).not.toContain('s3cr');
    expect(parsed.printable).not.toContain('relay');
  });

  it('reads a user without a password as a token, on one entry for the whole list', () => {
    const parsed = parseNatsServers('nats://t0ken-value@nats-0:4222, nats-1:4222');
    expect(parsed).toMatchObject({ token: 't0ken-value', servers: ['nats://nats-0:4222', 'nats://nats-1:4222'] });
    expect(parsed.printable).not.toContain('t0ken');
  });

  it('refuses an empty entry, naming its position', () => {
    expect(refusal('nats://a:4222,,nats://b:4222')).toBe('NATS_URL entry 2 is empty (servers are separated by single commas)');
    expect(refusal('nats://a:4222,')).toContain('entry 2 is empty');
    expect(refusal('')).toContain('entry 1 is empty');
  });

  it('refuses other schemes, websockets and paths, naming the entry', () => {
    expect(refusal('nats://a:4222,http://nats:4222')).toBe('NATS_URL entry 2 (http://nats:4222) must be nats://, tls:// or host:port');
    expect(refusal('ws://nats:8080')).toContain('entry 1 (ws://nats:8080) is a websocket URL');
    expect(refusal('nats://nats:4222/relay')).toContain('entry 1 (nats://nats:4222) has a path or query');
    expect(refusal('nats://nats:4222?x=1')).toContain('has a path or query');
  });

  it('refuses a port out of range or a space inside an entry', () => {
    expect(refusal('nats://a:4222,nats://b:70000')).toBe('NATS_URL entry 2 (nats://b:70000) is not a server address (nats://host:port or host:port)');
    expect(refusal('nats://a b:4222')).toContain('entry 1');
  });

  it('never repeats credentials in a refusal', () => {
    const message = refusal('nats://relay:hunter2@nats-0:99999');
    expect(message).toContain('entry 1 (nats://***@nats-0:99999)');
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('relay:');
    expect(refusal('nats://relay:a/b@nats-0:4222/x')).not.toContain('a/b');
    expect(refusal('http://relay:hunter2@nats:4222')).not.toContain('hunter2');
  });

  it('refuses entries carrying different credentials', () => {
    const message = refusal('nats://a:one@nats-0:4222,nats://b:two@nats-1:4222');
    expect(message).toContain('entry 2 (nats://nats-1:4222) carries other credentials');
    expect(message).not.toContain('two');
  });
});

describe('NATS_URL in the config', () => {
  it('is validated by the parser, whose message names the bad entry', () => {
    let thrown: unknown;
    try {
      loadConfig(CommonConfig, { NATS_URL: 'nats://a:4222, nats://b:4222/x' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigValidationError);
    expect((thrown as Error).message).toContain('NATS_URL: NATS_URL entry 2 (nats://b:4222) has a path or query');
  });

  it('gives the parsed servers, following a changed value', () => {
    const config = loadConfig(CommonConfig, { NATS_URL: 'nats://a:4222,nats://b:4222' });
    expect(config.natsServers.servers).toEqual(['nats://a:4222', 'nats://b:4222']);
    config.NATS_URL = 'nats://c:4222';
    expect(config.natsServers.servers).toEqual(['nats://c:4222']);
  });

  it('reads RELAY_JETSTREAM_REPLICAS from 1 to 5', () => {
    expect(loadConfig(CommonConfig, {}).RELAY_JETSTREAM_REPLICAS).toBe(1);
    expect(loadConfig(CommonConfig, { RELAY_JETSTREAM_REPLICAS: '3' }).RELAY_JETSTREAM_REPLICAS).toBe(3);
    expect(() => loadConfig(CommonConfig, { RELAY_JETSTREAM_REPLICAS: '0' })).toThrow(/RELAY_JETSTREAM_REPLICAS/);
    expect(() => loadConfig(CommonConfig, { RELAY_JETSTREAM_REPLICAS: '6' })).toThrow(/RELAY_JETSTREAM_REPLICAS/);
  });
});
