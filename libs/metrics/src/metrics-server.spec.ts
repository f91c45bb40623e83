import { Registry } from 'prom-client';
import { MetricsServer } from './metrics-server';

describe('MetricsServer', () => {
  let server: MetricsServer;
  let postgresUp = true;

  beforeAll(async () => {
    server = new MetricsServer(new Registry(), '127.0.0.1', 0);
    server.addReadinessCheck('postgres', async () => postgresUp);
    server.addReadinessCheck('nats', async () => {
      throw new Error('closed');
    });
    await server.listen();
  });

  afterAll(() => server.close());

  it('answers /readyz 503 naming every failing check, and 200 once they pass', async () => {
    postgresUp = false;
    const down = await fetch(`${server.url}/readyz`);
    expect([down.status, await down.text()]).toEqual([503, 'not ready: postgres, nats down\n']);
    postgresUp = true;
    const half = await fetch(`${server.url}/readyz`);
    expect(await half.text()).toBe('not ready: nats down\n');
  });

  it('answers /readyz 503 naming a check that throws before returning a promise', async () => {
    const strict = new MetricsServer(new Registry(), '127.0.0.1', 0);
    strict.addReadinessCheck('cache', () => {
      throw new Error('not a promise');
    });
    await strict.listen();
    try {
      const down = await fetch(`${strict.url}/readyz`);
      expect([down.status, await down.text()]).toEqual([503, 'not ready: cache down\n']);
    } finally {
      await strict.close();
    }
  });

  it('answers /healthz while the process runs and refuses other methods', async () => {
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/metrics`, { method: 'DELETE' })).status).toBe(405);
  });

  it('names METRICS_PORT when its port is taken', async () => {
    const port = Number(new URL(server.url).port);
    const second = new MetricsServer(new Registry(), '127.0.0.1', port);
    await expect(second.listen()).rejects.toThrow(`The metrics server cannot listen on 127.0.0.1:${port} (METRICS_HOST / METRICS_PORT)`);
  });
});
