import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import request from 'supertest';
import { HEALTH_SUBJECTS, prefixedSubject } from '@app/contracts';
import { ensureEventStream, eventStreamName, openJetStream, type JetStreamContext } from '@app/messaging';
import { dropDatabase, ensureDatabaseExists } from '../libs/database/src/create-database';
import { registerAgent, uniqueHandle } from './support/agents';
import { RelayHarness, TEST_ADMIN_TOKEN, type ServiceName } from './support/relay-harness';
import { testDatabaseUrl, testNatsUrl } from './support/test-env';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('./support/process/register-ts.mjs', import.meta.url));
const SERVICES: ServiceName[] = ['directory', 'tasks', 'notifier'];

/** A database of this file's own (named like the run's, so a crashed run's copy is cleaned up). */
function ownDatabaseUrl(): string {
  const url = new URL(process.env.TEST_DATABASE_BASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres');
  url.pathname = `/relay_test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  return url.toString();
}

async function deploymentIdOf(databaseUrl: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ deployment_id: string }>('SELECT "deployment_id" FROM "relay"."deployment"');
    expect(rows).toHaveLength(1);
    return rows[0].deployment_id;
  } finally {
    await client.end();
  }
}

/** How the event stream names its deployment (docs/architecture.md): its description, as NATS 2.9 has no stream metadata. */
function deploymentDescription(deploymentId: string): string {
  return `agentrelay deployment ${deploymentId}`;
}

/**
 * Runs a service's main.ts as its own process with `env` and returns its exit code and what it
 * printed; one still running after `timeoutMs` (it started) is killed and answers a null code.
 */
function runService(service: ServiceName, env: Record<string, string>, timeoutMs = 30000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--enable-source-maps', '--import', REGISTER_TS, `apps/${service}/src/main.ts`], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/**
 * Two relays (two databases) on one NATS under the same NATS_SUBJECT_PREFIX would answer each
 * other's requests. The event stream of a prefix names the deployment that owns it: another
 * deployment's services refuse to start, naming NATS_SUBJECT_PREFIX, and the first relay goes on.
 */
describe('one deployment per subject prefix', () => {
  const otherDatabase = ownDatabaseUrl();
  let relayA: RelayHarness;
  let relayB: RelayHarness | undefined;
  let jetStream: JetStreamContext;
  let deploymentA: string;

  beforeAll(async () => {
    await ensureDatabaseExists(otherDatabase);
    jetStream = await openJetStream({ url: testNatsUrl(), name: 'test-deployment-id' });
    relayA = await RelayHarness.start();
  });

  afterAll(async () => {
    await relayB?.stop();
    await relayA?.stop();
    await jetStream?.connection.close();
    await dropDatabase(otherDatabase);
  });

  async function relayAWorks(): Promise<void> {
    const alice = await registerAgent(relayA, { handle: uniqueHandle('alice', 'deploy'), name: 'Alice' });
    const found = await request(relayA.url)
      .get(`/admin/agents/${encodeURIComponent(alice.agent.handle)}`)
      .set('authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(found.status).toBe(200);
    const ready = await request(relayA.url).get('/readyz');
    expect(ready.body).toMatchObject({ status: 'ready' });
  }

  it("names relay A's deployment on its event stream and in every service's health answer", async () => {
    deploymentA = await deploymentIdOf(testDatabaseUrl());
    const info = await jetStream.jsm.streams.info(eventStreamName(relayA.subjectPrefix));
    expect(info.config.description).toBe(deploymentDescription(deploymentA));
    const ready = await request(relayA.url).get('/readyz');
    expect(ready.status).toBe(200);
    for (const service of SERVICES) expect(ready.body.services[service]).toMatchObject({ status: 'up', deployment: deploymentA });
  });

  it("makes relay A's edge not ready, and a new edge refuse to start, while its services answer for different deployments", async () => {
    await relayA.stopService('tasks');
    // A tasks service of another deployment answering relay A's health subject.
    const impostor = jetStream.connection.subscribe(prefixedSubject(relayA.subjectPrefix, HEALTH_SUBJECTS.tasks), {
      callback: (_error, message) => {
        message.respond(
          JSON.stringify({
            response: { service: 'tasks', status: 'ok', postgres: 'up', instance: 'impostor', deployment: '01JOTHERDEPLOYMENT00000000' },
            isDisposed: true,
          }),
        );
      },
    });
    try {
      await jetStream.connection.flush();
      const ready = await request(relayA.url).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.down).toEqual(['deployment']);
      expect(ready.body.services.tasks).toMatchObject({ status: 'up', deployment: '01JOTHERDEPLOYMENT00000000' });
      // A new edge does not start.
      await expect(relayA.startEdge()).rejects.toThrow(
        `NATS_SUBJECT_PREFIX="${relayA.subjectPrefix}" is answered by services of different AgentRelay deployments (`,
      );
    } finally {
      impostor.unsubscribe();
      await relayA.startService('tasks');
    }
    expect((await request(relayA.url).get('/readyz')).status).toBe(200);
  });

  it("refuses relay B's services (another database, the same prefix) with a message naming NATS_SUBJECT_PREFIX; relay A goes on", async () => {
    relayB = new RelayHarness({ env: { DATABASE_URL: otherDatabase, NATS_SUBJECT_PREFIX: relayA.subjectPrefix } });
    for (const service of SERVICES) {
      await expect(relayB.startService(service)).rejects.toThrow(
        `NATS_SUBJECT_PREFIX="${relayA.subjectPrefix}" is already served by another AgentRelay deployment`,
      );
    }
    const deploymentB = await deploymentIdOf(otherDatabase);
    expect(deploymentB).not.toBe(deploymentA);
    await expect(relayB.startService('tasks')).rejects.toThrow(
      `(stream ${eventStreamName(relayA.subjectPrefix)} has deployment ${deploymentA}, this database has ${deploymentB}): ` +
        'give each deployment its own NATS_SUBJECT_PREFIX or its own NATS credentials/account',
    );
    // The stream still belongs to relay A, which answers as before.
    const info = await jetStream.jsm.streams.info(eventStreamName(relayA.subjectPrefix));
    expect(info.config.description).toBe(deploymentDescription(deploymentA));
    await relayAWorks();
  });

  it('a refused service process prints one line naming NATS_SUBJECT_PREFIX and exits with 1', async () => {
    const { code, output } = await runService('directory', { ...relayA.env({ DATABASE_URL: otherDatabase }), LOG_LEVEL: 'silent' });
    expect(code).toBe(1);
    expect(output.trim()).toMatch(/^NATS_SUBJECT_PREFIX="[^"]+" is already served by another AgentRelay deployment \(stream .+\): give each deployment/);
    expect(output.trim().split('\n')).toHaveLength(1);
  });

  it("restarts relay A's services on their own database", async () => {
    for (const service of SERVICES) {
      await relayA.stopService(service);
      await relayA.startService(service);
    }
    await relayAWorks();
  });

  it('claims a stream that names no deployment (made by an older relay)', async () => {
    const older = new RelayHarness({ services: [] });
    try {
      await ensureEventStream(jetStream.jsm, older.subjectPrefix);
      const before = await jetStream.jsm.streams.info(eventStreamName(older.subjectPrefix));
      expect(before.config.description).toBeUndefined();
      await older.startService('tasks');
      const after = await jetStream.jsm.streams.info(eventStreamName(older.subjectPrefix));
      expect(after.config.description).toBe(deploymentDescription(deploymentA));
    } finally {
      await older.stop();
    }
  });
});
