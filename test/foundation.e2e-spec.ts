import request from 'supertest';
import { HEALTH_SUBJECTS, RelayError } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { RelayHarness } from './support/relay-harness';
import { testNatsUrl } from './support/test-env';

describe('foundation: four services on NATS and Postgres', () => {
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start();
  });

  afterAll(async () => {
    await relay.stop();
  });

  it('answers /healthz while the process is up', async () => {
    await request(relay.url).get('/healthz').expect(200, { status: 'ok' });
  });

  it('is ready when NATS and every service with its Postgres answer', async () => {
    const response = await request(relay.url).get('/readyz').expect(200);
    expect(response.body).toMatchObject({
      status: 'ready',
      nats: 'up',
      down: [],
      services: {
        tasks: { status: 'up', postgres: 'up' },
        directory: { status: 'up', postgres: 'up' },
        notifier: { status: 'up', postgres: 'up' },
      },
    });
  });

  it('echoes a request id header, generating one when the caller sends none', async () => {
    const given = await request(relay.url).get('/healthz').set('x-request-id', 'trace-123').expect(200);
    expect(given.headers['x-request-id']).toBe('trace-123');
    const generated = await request(relay.url).get('/healthz').expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('spreads requests over two replicas of the tasks service (queue group)', async () => {
    await relay.startService('tasks');
    const client = relay.edge.get(NatsRpcClient);
    const instances = new Set<string>();
    for (let attempt = 0; attempt < 60 && instances.size < 2; attempt++) {
      const reply = await client.request(HEALTH_SUBJECTS.tasks, {});
      instances.add(reply.instance);
    }
    expect(instances.size).toBe(2);
  });

  it('does not see the services of another subject prefix', async () => {
    const stranger = await NatsRpcClient.connect({
      url: testNatsUrl(),
      subjectPrefix: `${relay.subjectPrefix}_other`,
      defaultTimeoutMs: 1000,
      name: 'stranger',
    });
    try {
      await expect(stranger.request(HEALTH_SUBJECTS.tasks, {})).rejects.toMatchObject({ reason: 'service_unavailable' });
    } finally {
      await stranger.drain();
    }
  });

  it('turns /readyz to 503 naming a stopped service, and fails fast with no responders', async () => {
    await relay.stopService('directory');
    const response = await request(relay.url).get('/readyz').expect(503);
    expect(response.body.status).toBe('not_ready');
    expect(response.body.down).toEqual(['directory']);
    expect(response.body.services.directory).toMatchObject({ status: 'down', error: 'service_unavailable' });

    const client = relay.edge.get(NatsRpcClient);
    const startedAt = Date.now();
    const error = await client.request(HEALTH_SUBJECTS.directory, {}, 10000).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RelayError);
    expect((error as RelayError).reason).toBe('service_unavailable');
    expect(Date.now() - startedAt).toBeLessThan(2000);
  });
});
