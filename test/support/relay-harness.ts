import type { INestMicroservice } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadConfig } from '@app/config';
import type { LoggingOptions } from '@app/logging';
import { consoleSessionStreamName, deleteEventStream, keyFilterBucketName, openJetStream, rateLimitStreamName } from '@app/messaging';
import { generateAssertionKeyPair } from '@app/secrets';
import { createEdgeApp } from '../../apps/edge/src/bootstrap';
import { EdgeConfig } from '../../apps/edge/src/edge.config';
import { startTasksService } from '../../apps/tasks/src/bootstrap';
import { TasksConfig } from '../../apps/tasks/src/tasks.config';
import { startDirectoryService } from '../../apps/directory/src/bootstrap';
import { DirectoryConfig } from '../../apps/directory/src/directory.config';
import { startNotifierService } from '../../apps/notifier/src/bootstrap';
import { NotifierConfig } from '../../apps/notifier/src/notifier.config';
import { testDatabaseUrl, testNatsUrl, uniqueSubjectPrefix } from './test-env';

export type ServiceName = 'tasks' | 'directory' | 'notifier';

export interface RelayHarnessOptions {
  /** Extra environment for every process of this relay. */
  env?: Record<string, string>;
  services?: ServiceName[];
  /** Where every process of this relay writes its log lines (with LOG_LEVEL in `env`); stdout otherwise. */
  logDestination?: LoggingOptions['logDestination'];
  /** The subject prefix (a unique one otherwise): a NATS server whose permissions name one. */
  subjectPrefix?: string;
  /** Environment of one process only (its own NATS credential), over `env`. */
  envOf?: (process: 'edge' | ServiceName) => Record<string, string>;
  /** The NATS URL (and credential) the harness cleans this run's streams up with; none skips it (a private server is thrown away). */
  cleanupNatsUrl?: string | null;
}

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';

/** The key that seals stored secrets in tests (a fixed one, so a restarted service opens what another sealed). */
export const TEST_SECRET_KEYS = 'test:dGVzdC1zZWNyZXQta2V5LTAxMjM0NTY3ODlhYmNkZWY=';
export const TEST_STREAM_ID_KEY = 'dGVzdC1zdHJlYW0taWQta2V5LTAxMjM0NTY3ODlhYmM=';
/** The notifier's key pair in tests: what the others seal to it over NATS, and what opens it. */
export const TEST_NOTIFIER_SEALING_KEYS = 'test:EHy70PCwLcHtXsTPPky7I3tiQGuhEb5VUt6vuxaW1Xo';
export const TEST_NOTIFIER_PUBLIC_KEY = 'test:qQlesDFs_Pjc6tB1u5qu3iclkAw1A8qZoTs1ugTG2lQ';
/** The key the notifier signs delivery assertions with in tests, and the edge's published set (its public half). */
export const TEST_ASSERTION_KEYS = generateAssertionKeyPair('test');

/**
 * A whole relay inside the test process: the edge on an ephemeral loopback port and each service
 * as a Nest microservice with its own NATS connection, all under a subject prefix of their own.
 */
export class RelayHarness {
  readonly subjectPrefix: string;
  readonly edges: NestFastifyApplication[] = [];
  readonly services = new Map<ServiceName, INestMicroservice[]>();

  constructor(private readonly options: RelayHarnessOptions = {}) {
    this.subjectPrefix = options.subjectPrefix ?? uniqueSubjectPrefix();
  }

  static async start(options: RelayHarnessOptions = {}): Promise<RelayHarness> {
    const harness = new RelayHarness(options);
    for (const service of options.services ?? ['directory', 'tasks', 'notifier']) {
      await harness.startService(service);
    }
    await harness.startEdge();
    return harness;
  }

  env(extra: Record<string, string> = {}): Record<string, string> {
    return {
      NATS_URL: testNatsUrl(),
      NATS_SUBJECT_PREFIX: this.subjectPrefix,
      DATABASE_URL: testDatabaseUrl(),
      RELAY_MIGRATE_ON_START: 'true',
      LOG_LEVEL: process.env.TEST_LOG_LEVEL || 'silent',
      RELAY_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      RELAY_SECRET_KEYS: TEST_SECRET_KEYS,
      RELAY_NOTIFIER_SEALING_KEYS: TEST_NOTIFIER_SEALING_KEYS,
      RELAY_NOTIFIER_PUBLIC_KEY: TEST_NOTIFIER_PUBLIC_KEY,
      RELAY_ASSERTION_SIGNING_KEY: TEST_ASSERTION_KEYS.signingKey,
      RELAY_ASSERTION_PUBLIC_KEYS: TEST_ASSERTION_KEYS.publicKey,
      // One key for every edge of a harness, so that a stream resumes on another edge.
      RELAY_STREAM_ID_KEY: TEST_STREAM_ID_KEY,
      // Generous: test files run in parallel on a loaded machine, and a test that means to see a
      // timeout sets its own.
      NATS_REQUEST_TIMEOUT_MS: '20000',
      // Tests make many calls per agent; the rate-limit tests lower this again.
      RELAY_RATE_LIMIT_PER_MINUTE: '100000',
      // Tests send many handoffs between one pair; the chain tests lower this again.
      RELAY_PAIR_HANDOFFS_PER_MINUTE: '100000',
      // Every process's metrics server on a free port (several relays share this machine).
      METRICS_PORT: '0',
      // Tests refuse many bad keys and tokens, all from 127.0.0.1; the failed-login tests lower this again.
      RELAY_AUTH_FAILURES_PER_WINDOW: '100000',
      ...this.options.env,
      ...extra,
    };
  }

  get edge(): NestFastifyApplication {
    return this.edges[0];
  }

  /** The base URL of the first edge (http://127.0.0.1:<port>). */
  get url(): string {
    return this.urlOf(this.edges[0]);
  }

  urlOf(edge: NestFastifyApplication): string {
    const address = edge.getHttpServer().address();
    if (!address || typeof address === 'string') throw new Error('edge is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  async startEdge(extra: Record<string, string> = {}): Promise<NestFastifyApplication> {
    const config = loadConfig(EdgeConfig, this.env({ EDGE_PORT: '0', ...this.options.envOf?.('edge'), ...extra }));
    const app = await createEdgeApp(config, { logDestination: this.options.logDestination });
    await app.listen(config.EDGE_PORT, '127.0.0.1');
    const port = (app.getHttpServer().address() as { port: number }).port;
    config.RELAY_PUBLIC_URL = extra.RELAY_PUBLIC_URL ?? `http://127.0.0.1:${port}`;
    this.edges.push(app);
    return app;
  }

  /** Stops the first edge and starts one in its place, on the same port (so at the same URL), with these settings. */
  async restartEdge(extra: Record<string, string> = {}): Promise<NestFastifyApplication> {
    const port = new URL(this.url).port;
    const [first] = this.edges.splice(0, 1);
    await first.close();
    const app = await this.startEdge({ ...extra, EDGE_PORT: port });
    // The replacement answers as the first edge.
    this.edges.unshift(this.edges.pop() as NestFastifyApplication);
    return app;
  }

  async startService(service: ServiceName, extra: Record<string, string> = {}): Promise<INestMicroservice> {
    const env = this.env({ ...this.options.envOf?.(service), ...extra });
    let app: INestMicroservice;
    switch (service) {
      case 'tasks':
        app = await startTasksService(loadConfig(TasksConfig, env), { logDestination: this.options.logDestination });
        break;
      case 'directory':
        app = await startDirectoryService(loadConfig(DirectoryConfig, env), { logDestination: this.options.logDestination });
        break;
      case 'notifier':
        app = await startNotifierService(loadConfig(NotifierConfig, env), { logDestination: this.options.logDestination });
        break;
    }
    this.services.set(service, [...(this.services.get(service) ?? []), app]);
    return app;
  }

  async stopService(service: ServiceName): Promise<void> {
    const apps = this.services.get(service) ?? [];
    this.services.delete(service);
    await Promise.all(apps.map((app) => app.close()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.edges.splice(0).map((edge) => edge.close()));
    for (const service of [...this.services.keys()]) await this.stopService(service);
    await this.deleteEventStream();
  }

  /** Removes this run's JetStream event stream (file storage), which the services created, from the NATS it ran on. */
  private async deleteEventStream(): Promise<void> {
    if (this.options.cleanupNatsUrl === null) return;
    const jetStream = await openJetStream({ url: this.options.cleanupNatsUrl ?? this.env().NATS_URL, name: 'test-harness-cleanup' });
    try {
      await deleteEventStream(jetStream.jsm, this.subjectPrefix);
      // The edges' rate-limit counters and console sessions of this run, if any.
      await jetStream.jsm.streams.delete(rateLimitStreamName(this.subjectPrefix)).catch(() => undefined);
      await jetStream.jsm.streams.delete(consoleSessionStreamName(this.subjectPrefix)).catch(() => undefined);
      // The directory's key filter bucket (file storage).
      await jetStream.jsm.streams.delete(`KV_${keyFilterBucketName(this.subjectPrefix)}`).catch(() => undefined);
    } finally {
      await jetStream.connection.drain();
    }
  }
}
