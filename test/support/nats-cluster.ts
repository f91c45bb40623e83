import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventually } from './eventually';
import { listeningPort } from './private-nats';

const NATS_SERVER = process.env.NATS_SERVER_BIN || '/usr/sbin/nats-server';

/** A loopback port free a moment ago, for a route port the other nodes must know before it binds. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

interface ClusterNode {
  name: string;
  routePort: number;
  storeDir: string;
  clientPort?: number;
  child?: ChildProcess;
  output: string;
}

/**
 * A NATS cluster with JetStream of a test's own: `size` nats-servers on loopback, routed to each
 * other, each with its own store folder. A node can be stopped while the others go on.
 */
export class PrivateNatsCluster {
  private constructor(
    private readonly name: string,
    private readonly nodes: ClusterNode[],
  ) {}

  static async start(size = 3): Promise<PrivateNatsCluster> {
    const name = `relay-test-${process.pid}-${Date.now().toString(36)}`;
    const nodes: ClusterNode[] = [];
    for (let index = 0; index < size; index++) {
      nodes.push({ name: `${name}-n${index}`, routePort: await freePort(), storeDir: mkdtempSync(join(tmpdir(), 'relay-nats-cluster-')), output: '' });
    }
    const cluster = new PrivateNatsCluster(name, nodes);
    try {
      await Promise.all(nodes.map((node) => cluster.launch(node)));
      await cluster.waitForJetStream();
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** `nats://127.0.0.1:<port>` of each node, in order. */
  get urls(): string[] {
    return this.nodes.map((node) => `nats://127.0.0.1:${node.clientPort}`);
  }

  /**
   * Stops one node (SIGTERM: it tells the others it is going, so JetStream places no new stream on
   * it; a killed node would count as up until its heartbeats are missed). The others keep the
   * cluster, and with a majority left JetStream, going.
   */
  async stopNode(index: number): Promise<void> {
    await this.kill(this.nodes[index], 'SIGTERM');
  }

  /** Waits until the nodes still running have a JetStream meta leader: a stream can be created (and is deleted again). */
  async waitForJetStream(): Promise<void> {
    const running = this.nodes.filter((node) => node.child);
    const connection = await connect({ servers: running.map((node) => `127.0.0.1:${node.clientPort}`), name: 'test-cluster-check' });
    let probes = 0;
    try {
      await eventually(
        async () => {
          const jsm = await jetstreamManager(connection, { timeout: 2000 });
          const probe = `CLUSTER_PROBE_${++probes}`;
          await jsm.streams.add({ name: probe, subjects: [`cluster.probe.${probes}`] });
          await jsm.streams.delete(probe);
        },
        60_000,
        250,
      );
    } finally {
      await connection.close();
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => this.kill(node)));
    for (const node of this.nodes) rmSync(node.storeDir, { recursive: true, force: true });
  }

  private async kill(node: ClusterNode, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = node.child;
    node.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill(signal);
    await exited;
  }

  private async launch(node: ClusterNode): Promise<void> {
    const routes = this.nodes.filter((other) => other !== node).map((other) => `nats://127.0.0.1:${other.routePort}`);
    const args = ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', node.storeDir, '--server_name', node.name, '--cluster_name', this.name];
    args.push('--cluster', `nats://127.0.0.1:${node.routePort}`, '--routes', routes.join(','));
    const child = spawn(NATS_SERVER, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout?.on('data', (chunk: Buffer) => (node.output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (node.output += chunk.toString('utf8')));
    node.child = child;
    const deadline = Date.now() + 30_000;
    while (!node.output.includes('Server is ready')) {
      if (child.exitCode !== null) throw new Error(`nats-server ${node.name} exited (${child.exitCode}):\n${node.output.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`nats-server ${node.name} did not start:\n${node.output.slice(-2000)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    node.clientPort = listeningPort(node.output);
  }
}
