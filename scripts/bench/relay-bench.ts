/**
 * `npm run bench`: the relay (four processes from dist/) beside the official A2A SDK server (on
 * Postgres and in memory) and a floor server, on one load generator, in one run. See bench/README.md.
 *
 *   npm run bench                 # full: 3 rounds, windows up to 4 s / 2000 requests, inbox to 1M tasks
 *   npm run bench -- --quick      # under 3 minutes: 2 rounds, 1 s windows, inbox to 100k tasks
 *   npm run bench -- --help
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { parseNatsServers, type NatsServers } from '@app/config';
import { dropDatabase, ensureDatabaseExists } from '@app/database';
import { openJetStream } from '@app/messaging';
import { generateAssertionKeyPair, generateNotifierSealingKeyPair } from '@app/secrets';
import { migrateAllSchemas } from '../migrate-all';
import { renderChart } from './chart';
import { HttpClient } from './load-generator';
import { isUpstreamScenario, parseOptions, UPSTREAM_MODES, type ServerName, type UpstreamMode } from './options';
import { BASELINE_APPLICATIONS, BENCH_APPLICATION, HANDOFF_FLOOR_APPLICATION, PgProcesses } from './pg-processes';
import { pidsByCommand, ProcessSampler, type ProcessGroup } from './proc-sampler';
import { migrateSdkTaskStore, NO_OWN_ENV, readyPort, RELAY_SERVICES, startBaseline, startRelay, stopChildren, waitForHttp, type Child } from './processes';
import { setUpRelayAgents } from './relay-fixture';
import { EventWatch } from './event-watch';
import { replicasScenario, type ReplicasResult } from './replicas';
import { chainCreatesTable, cpuTable, declineRows, declineTable, eventsTable, inboxTable, mainTable, rssTable, summarize } from './report';
import { Bench, FanoutSink, type Target, type UpstreamSetup } from './scenarios';
import { startBenchNats, type BenchNats } from './secure-nats';
import { summarizeUpstream, UPSTREAM_PROCESS, upstreamBaseUrl, upstreamTables } from './upstream-handoff';
import { writePlanLines, writePlansTable } from './write-plans';

/** The report's heading of each `upstream*` scenario. */
const UPSTREAM_HEADINGS: Record<UpstreamMode, string> = {
  poll: 'Upstream: a handoff through the relay to an upstream A2A agent of the official SDK, and the SDK client calling that agent directly',
  stream: "Upstream that streams: the same, the agent's card declaring streaming (the relay reads its `SendStreamingMessage` stream)",
  push: "Upstream that answers by push: the same, the agent completing each task later and pushing the final task to the relay's push receiver",
};

const ADMIN_TOKEN = `bench_${randomBytes(16).toString('hex')}`;

async function verifyStored(db: pg.Client, acknowledged: Map<ServerName, string[]>): Promise<Record<string, { acknowledged: number; stored: number | null }>> {
  const queries: Partial<Record<ServerName, string>> = {
    relay: `SELECT count(*)::int AS n FROM "tasks"."tasks" WHERE "id" = ANY($1::text[])`,
    'sdk-postgres': `SELECT count(*)::int AS n FROM public."tasks" WHERE "id" = ANY($1::text[])`,
    floor: `SELECT count(*)::int AS n FROM bench_floor_tasks WHERE id = ANY($1::uuid[])`,
  };
  const result: Record<string, { acknowledged: number; stored: number | null }> = {};
  for (const [server, ids] of acknowledged) {
    const unique = [...new Set(ids)];
    const query = queries[server];
    const stored = query ? (await db.query<{ n: number }>(query, [unique])).rows[0].n : null;
    result[server] = { acknowledged: unique.length, stored };
  }
  return result;
}

async function deleteStreams(nats: string | NatsServers, subjectPrefix: string): Promise<string[]> {
  const jetStream = await openJetStream({ url: nats, name: 'bench-cleanup' });
  const deleted: string[] = [];
  try {
    const scope = subjectPrefix.replace(/[^A-Za-z0-9_-]/g, '_');
    for await (const stream of jetStream.jsm.streams.list()) {
      const name = stream.config.name;
      const ours = name.includes(scope) || (stream.config.subjects ?? []).some((subject) => subject.startsWith(`${subjectPrefix}.`));
      if (ours && (await jetStream.jsm.streams.delete(name).catch(() => false))) deleted.push(name);
    }
  } finally {
    await jetStream.connection.drain();
  }
  return deleted;
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

async function main(): Promise<void> {
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(process.argv.slice(2), process.env);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  }
  const startedAt = new Date();
  const loadAtStart = loadavg()
    .map((value) => value.toFixed(1))
    .join(' / ');
  const databaseName = `relay_bench_${Date.now().toString(36)}`;
  const databaseUrl = `${options.postgresUrl}/${databaseName}`;
  const subjectPrefix = `bench_${randomBytes(4).toString('hex')}`;
  const children: Child[] = [];
  const clients: HttpClient[] = [];
  let sink: FanoutSink | undefined;
  let events: EventWatch | undefined;
  let db: pg.Client | undefined;
  /** `--nats secure|private`: the bench's own nats-server; with secure the bench's helpers connect as its full-permission user. */
  let ownNats: BenchNats | undefined;
  const benchNats = (): string | NatsServers => ownNats?.benchServers ?? options.natsUrl;
  let failed = false;
  let cleaned: Promise<void> | undefined;
  const cleanup = (): Promise<void> =>
    (cleaned ??= (async () => {
      for (const client of clients) client.close();
      await stopChildren(children).catch((error: unknown) => console.error('stopping the servers:', error));
      await sink?.stop().catch(() => undefined);
      await events?.stop().catch(() => undefined);
      await db?.end().catch(() => undefined);
      await dropDatabase(databaseUrl).catch((error: unknown) => console.error(`dropping ${databaseName}:`, error));
      const streams = await deleteStreams(benchNats(), subjectPrefix).catch((error: unknown) => {
        console.error('deleting the JetStream streams:', error);
        return [];
      });
      const stoppedNats = ownNats ? `, stopped the bench's nats-server (pid ${ownNats.pid}) and removed its folder` : '';
      await ownNats?.stop().catch((error: unknown) => console.error("stopping the bench's nats-server:", error));
      console.log(`Cleaned up: dropped ${databaseName}, deleted streams ${streams.join(', ') || '(none)'}${stoppedNats}`);
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      console.error(`\n${signal}: stopping and cleaning up…`);
      void cleanup().finally(() => process.exit(130));
    });
  }
  const phase = (what: string): void => console.log(`[${((Date.now() - startedAt.getTime()) / 1000).toFixed(1).padStart(5)} s] ${what}`);
  console.log(
    `AgentRelay bench${options.quick ? ' (quick)' : ''}: database ${databaseName}, subject prefix ${subjectPrefix}, concurrency ${options.concurrencies.join('/')}, ${options.rounds} rounds, NATS ${options.nats}`,
  );
  try {
    phase('creating and migrating the bench database');
    await ensureDatabaseExists(databaseUrl);
    await migrateAllSchemas(databaseUrl);
    if (options.servers.includes('sdk-postgres')) await migrateSdkTaskStore(databaseUrl);
    if (options.nats !== 'plain') {
      phase(
        `starting the bench's own nats-server${options.nats === 'secure' ? ' (TLS with client certificates, an nkey user per relay process)' : ' (no TLS, no authorization)'}`,
      );
      ownNats = await startBenchNats(subjectPrefix, options.nats === 'secure');
    }
    sink = await FanoutSink.start();
    events = await EventWatch.start(benchNats(), subjectPrefix);

    phase('starting the relay and the baselines');
    const relayUrl = `http://127.0.0.1:${options.port}`;
    const upstreamModes: UpstreamMode[] = options.scenarios.filter(isUpstreamScenario).map((scenario) => UPSTREAM_MODES[scenario]);
    const relayEnv: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      NATS_URL: options.natsUrl,
      NATS_SUBJECT_PREFIX: subjectPrefix,
      RELAY_MIGRATE_ON_START: 'false',
      RELAY_ADMIN_TOKEN: ADMIN_TOKEN,
      RELAY_RATE_LIMIT_PER_MINUTE: '100000',
      // One sender hands one recipient thousands of handoffs a minute: the pair rate would stop it.
      RELAY_PAIR_HANDOFFS_PER_MINUTE: '100000',
      // The live inbox's replay is measured with up to 32 streams of one agent at once.
      RELAY_STREAMS_PER_AGENT: '256',
      RELAY_WEBHOOK_ALLOW_PRIVATE: 'true',
      // `--scenarios upstream-push`: where the upstream agent that answers by push sends its notifications.
      ...(upstreamModes.includes('push') ? { RELAY_UPSTREAM_PUSH_URL: `${relayUrl}/upstream-push` } : {}),
      EDGE_PORT: String(options.port),
      EDGE_HOST: '127.0.0.1',
      RELAY_PUBLIC_URL: relayUrl,
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
      // A key of this run's own for the secrets the relay stores sealed.
      RELAY_SECRET_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      // What the services send the notifier over NATS is sealed to its key.
      ...((pair) => ({ RELAY_NOTIFIER_SEALING_KEYS: pair.sealingKey, RELAY_NOTIFIER_PUBLIC_KEY: pair.publicKey }))(generateNotifierSealingKeyPair('bench')),
      // Every delivery carries an assertion the notifier signs; the edge publishes its key.
      ...((pair) => ({ RELAY_ASSERTION_SIGNING_KEY: pair.signingKey, RELAY_ASSERTION_PUBLIC_KEYS: pair.publicKey }))(generateAssertionKeyPair('bench')),
      // --nats secure|private: the bench's server (secure: and the TLS files; each process's own seed comes from relayEnvOf).
      ...(ownNats?.env ?? {}),
    };
    const relayEnvOf = ownNats?.envOf ?? NO_OWN_ENV;
    const relay = startRelay(relayEnv, relayEnvOf);
    children.push(...relay.values());
    const baselineChildren = new Map<ServerName, Child>();
    const targets: Target[] = [{ name: 'relay', client: new HttpClient(relayUrl) }];
    options.servers
      .filter((server) => server !== 'relay')
      .forEach((server, index) => {
        const port = options.port + 1 + index;
        const child = startBaseline(server, server === 'floor' ? 'floor-server' : 'sdk-server', {
          BENCH_PORT: String(port),
          BENCH_SDK_STORE: server === 'sdk-memory' ? 'memory' : 'postgres',
          DATABASE_URL: databaseUrl,
        });
        baselineChildren.set(server, child);
        children.push(child);
        targets.push({ name: server, client: new HttpClient(`http://127.0.0.1:${port}`) });
      });
    clients.push(...targets.map((target) => target.client));
    for (const target of targets) {
      if (target.name === 'relay') await waitForHttp(target.client, '/readyz', [...relay.values()], 120000);
      else await waitForHttp(target.client, '/', [baselineChildren.get(target.name)!], 60000, 'POST');
    }

    // `--scenarios upstream…`: the upstream A2A agents of the official SDK, one process of their own on a free loopback port.
    let upstreamChild: Child | undefined;
    let upstreamSetup: UpstreamSetup | undefined;
    const floorChildren = new Map<string, Child>();
    if (upstreamModes.length > 0) {
      upstreamChild = startBaseline(UPSTREAM_PROCESS, 'upstream-agent', { BENCH_PORT: '0' });
      children.push(upstreamChild);
      upstreamSetup = { relayUrl, upstreamUrl: `http://127.0.0.1:${await readyPort(upstreamChild)}` };
      // The handoff floor on the bench's own NATS needs credentials it does not make for it: it runs on the server given.
      if (upstreamModes.includes('poll') && !ownNats) {
        const floorEnv = {
          NATS_URL: options.natsUrl,
          NATS_SUBJECT_PREFIX: subjectPrefix,
          DATABASE_URL: databaseUrl,
          BENCH_UPSTREAM_URL: upstreamBaseUrl(upstreamSetup.upstreamUrl, 'poll'),
        };
        // The notifier first (it makes the stream and its consumer), the edge last (it answers the bench).
        for (const role of ['notifier', 'tasks', 'edge'] as const) {
          const child = startBaseline(`floor-${role}`, 'handoff-floor', { ...floorEnv, BENCH_FLOOR_ROLE: role });
          floorChildren.set(role, child);
          children.push(child);
          const port = await readyPort(child);
          if (role === 'edge') upstreamSetup.floorUrl = `http://127.0.0.1:${port}/`;
        }
      } else if (upstreamModes.includes('poll'))
        console.log("  note: the handoff floor runs on the NATS server given (--nats plain), not on the bench's own: left out");
    }

    db = new pg.Client({ connectionString: databaseUrl, application_name: BENCH_APPLICATION });
    await db.connect();
    const maxSlots = Math.max(...options.concurrencies);
    phase('registering agents');
    const fixture = await setUpRelayAgents(
      targets[0].client,
      ADMIN_TOKEN,
      maxSlots,
      sink.url('/hook'),
      Object.fromEntries(upstreamModes.map((mode) => [mode, `${upstreamBaseUrl(upstreamSetup!.upstreamUrl, mode)}.well-known/agent-card.json`])),
    );

    const postgres = new PgProcesses(db, databaseName);
    const natsPids = ownNats ? [ownNats.pid] : process.env.BENCH_NATS_PID ? [Number(process.env.BENCH_NATS_PID)] : pidsByCommand('nats-server');
    if (natsPids.length !== 1)
      console.log(`  note: ${natsPids.length} nats-server processes found (${natsPids.join(', ')}); all are counted (BENCH_NATS_PID picks one)`);
    const groups: ProcessGroup[] = [
      ...RELAY_SERVICES.map((service) => ({ name: service, pids: () => [relay.get(service)!.process.pid!] })),
      { name: 'nats-server', pids: () => natsPids },
      { name: 'pg-relay', pids: postgres.backends(undefined) },
      ...[...baselineChildren].map(([server, child]) => ({ name: server, pids: () => [child.process.pid!] })),
      ...(upstreamChild ? [{ name: UPSTREAM_PROCESS, pids: () => [upstreamChild.process.pid!] }] : []),
      ...[...floorChildren].map(([role, child]) => ({ name: `floor-${role}`, pids: () => [child.process.pid!] })),
      ...(floorChildren.size > 0 ? [{ name: 'pg-handoff-floor', pids: postgres.backends(HANDOFF_FLOOR_APPLICATION) }] : []),
      ...Object.entries(BASELINE_APPLICATIONS)
        .filter(([server]) => baselineChildren.has(server as ServerName))
        .map(([server, application]) => ({ name: `pg-${server}`, pids: postgres.backends(application) })),
      { name: 'pg-background', pids: postgres.background() },
      { name: 'bench', pids: () => [process.pid] },
    ];
    const sampler = new ProcessSampler(groups, () => postgres.refresh());
    const bench = new Bench(options, sampler, targets, fixture, db, sink, events, upstreamSetup);
    phase('measuring');
    await bench.run();
    let replicas: ReplicasResult | undefined;
    if (options.scenarios.includes('replicas')) {
      console.log('\n## replicas');
      replicas = await replicasScenario({ options, relay, relayEnv, relayEnvOf, children, fixture, natsPids, postgres });
    }
    phase('verifying rows and writing the report');

    const verification = await verifyStored(db, bench.acknowledged);
    const rows = summarize(bench.records);
    const inbox = inboxTable(rows);
    const upstreamRows = summarizeUpstream(bench.upstreamWindows);
    const decline = declineRows(bench.records);
    const peaks = sampler.peaks();
    const finishedAt = new Date();
    const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
    const load = loadavg()
      .map((value) => value.toFixed(1))
      .join(' / ');
    const nats = ownNats
      ? {
          mode: options.nats,
          server: ownNats.url,
          description:
            options.nats === 'secure'
              ? `the bench's own nats-server ${ownNats.url}: TLS (server verified against a CA, client certificates required), an nkey user per relay process with its least privilege (writeNatsCredentials, prefix ${subjectPrefix})`
              : `the bench's own nats-server ${ownNats.url}: no TLS, no authorization`,
          sampledPids: natsPids,
          violations: ownNats.violations(),
        }
      : {
          mode: options.nats,
          server: parseNatsServers(options.natsUrl).printable,
          description: `NATS_URL as given (${parseNatsServers(options.natsUrl).printable}), no TLS or credential files set by the bench`,
          sampledPids: natsPids,
        };
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, CLK_TCK ${sampler.clockTicks}, load average at start ${loadAtStart}, at end ${load}`;
    const markdown = [
      `# AgentRelay bench — ${finishedAt.toISOString()}`,
      '',
      `\`${command}\` · commit ${gitCommit() ?? '?'} · ${machine} · ${options.rounds} rounds · NATS ${nats.mode}: ${nats.description}, nats-server pid(s) sampled ${natsPids.join(', ')} · ${((finishedAt.getTime() - startedAt.getTime()) / 1000).toFixed(0)} s`,
      '',
      '## Throughput, latency, CPU (medians over rounds; ratios are medians of per-round ratios)',
      '',
      mainTable(rows),
      '',
      '## Round to round: req/s per round, last ÷ first, and what grew in Postgres during each window',
      '',
      `Postgres: ${bench.vacuumSettings}`,
      '',
      declineTable(decline),
      '',
      "## Events: commit → published (the relay's create windows)",
      '',
      eventsTable(rows),
      '',
      '## CPU ms per request, per process',
      '',
      cpuTable(rows),
      '',
      ...(inbox.table.split('\n').length > 2 ? ['## Cost by table size (create, get, inbox list, live inbox replay)', '', inbox.table, ''] : []),
      ...(bench.inboxPlans.length > 0
        ? ['## Writes by table size (EXPLAIN ANALYZE of create, append, transition, each rolled back)', '', writePlansTable(bench.inboxPlans), '']
        : []),
      ...(options.scenarios.includes('create-linked')
        ? [
            "## Chains: a create naming a parent (`parent_task_id`), one linked by its `traceparent`, and the same create naming none (CPU ms per create of the relay's processes, Postgres included; ratios are medians of per-round ratios)",
            '',
            chainCreatesTable(bench.records),
            '',
          ]
        : []),
      ...upstreamModes.flatMap((mode) => {
        const of = upstreamRows.filter((row) => row.mode === mode);
        return of.length > 0 ? [`## ${UPSTREAM_HEADINGS[mode]}`, '', upstreamTables(of, bench.upstreamIdle[mode] ?? { before: {}, after: {} }), ''] : [];
      }),
      ...(replicas
        ? ['## Creates with 1 and 2 replicas of edge and tasks (CPU ms per request per process; idle rows CPU ms per second)', '', replicas.table, '']
        : []),
      '## Rows verified in Postgres',
      '',
      '| server | acknowledged | stored |',
      '|---|---:|---:|',
      ...Object.entries(verification).map(([server, { acknowledged, stored }]) => `| ${server} | ${acknowledged} | ${stored ?? 'n/a (memory)'} |`),
      '',
      '## Peak RSS',
      '',
      rssTable(peaks),
      '',
    ].join('\n');
    console.log(`\n${markdown}`);
    for (const [name, explain] of Object.entries(bench.chainPlans))
      console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of a create's ${name}, after the create-linked windows:\n${explain}`);
    for (const plan of bench.inboxPlans) {
      for (const [operation, explain] of Object.entries(plan.plans))
        console.log(`\nEXPLAIN (ANALYZE, BUFFERS) of ${operation} at ${plan.size.toLocaleString('en-US')} tasks:\n${explain}`);
      console.log(
        `\nEXPLAIN (ANALYZE, BUFFERS, WAL) of the writes at ${plan.size.toLocaleString('en-US')} tasks, rolled back:\n${writePlanLines(plan.writes).join('\n')}`,
      );
    }

    for (const child of children) {
      const stderr = child.stderrTail.join('').trim();
      if (stderr) console.log(`\nstderr of ${child.name} (last lines):\n${stderr.slice(-1500)}`);
    }
    if (options.nats === 'secure' && ownNats) {
      const violations = ownNats.violations();
      console.log(
        `\nThe bench's nats-server logged ${violations.length} permission or authorization violation(s)${violations.length ? `:\n${violations.slice(0, 10).join('\n')}` : ''}`,
      );
    }
    const lost = Object.values(verification).some(({ acknowledged, stored }) => stored !== null && stored < acknowledged);
    const report = {
      command,
      commit: gitCommit(),
      machine,
      nats,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
      options,
      summary: rows,
      decline,
      vacuumSettings: bench.vacuumSettings,
      inbox: { flatness: inbox.flatness, plans: bench.inboxPlans },
      ...(Object.keys(bench.chainPlans).length > 0 ? { chainPlans: bench.chainPlans } : {}),
      verification,
      peakRssKb: peaks,
      windows: bench.records,
      ...(replicas ? { replicas: { windows: replicas.records, idle: replicas.idle } } : {}),
      ...(upstreamRows.length > 0
        ? {
            upstream: {
              summary: upstreamRows,
              idleCpuMsPerSecond: bench.upstreamIdle,
              windows: bench.upstreamWindows,
            },
          }
        : {}),
    };
    mkdirSync(options.resultsDir, { recursive: true });
    const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
    const json = JSON.stringify(report, null, 2) + '\n';
    const svg = renderChart(
      rows.map((row) => ({ group: `${row.scenario} c=${row.concurrency}`, server: row.server, rps: row.rps, p99: row.p99 })),
      `AgentRelay bench — ${finishedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC — ${command}`,
    );
    writeFileSync(join(options.resultsDir, `${stamp}.json`), json);
    writeFileSync(join(options.resultsDir, 'latest.json'), json);
    writeFileSync(join(options.resultsDir, 'latest.svg'), svg);
    writeFileSync(join(options.resultsDir, 'latest.md'), markdown);
    console.log(`\nWrote ${join(options.resultsDir, `${stamp}.json`)}, latest.json, latest.svg and latest.md`);
    if (lost) {
      console.error('Some acknowledged tasks are missing from Postgres (see "Rows verified").');
      failed = true;
    }
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    await cleanup();
  }
  process.exit(failed ? 1 : 0);
}

void main();
