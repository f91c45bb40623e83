import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/** A named check that the process can do its work (e.g. its Postgres answers). */
export type ReadinessCheck = () => Promise<boolean>;

const TEXT = 'text/plain; charset=utf-8';

/**
 * The process's operations port (never the edge's public one), a plain node:http server:
 * `GET /metrics` in the Prometheus text format, `GET /healthz` (the process is up) and
 * `GET /readyz` (every readiness check passes; 503 naming the ones that fail).
 */
export class MetricsServer {
  private readonly server: Server;
  private readonly checks = new Map<string, ReadinessCheck>();

  constructor(
    private readonly registry: Registry,
    private readonly host: string,
    private readonly port: number,
  ) {
    this.server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD', 'content-type': TEXT }).end('Method not allowed\n');
        return;
      }
      if (path === '/metrics') {
        this.registry.metrics().then(
          (text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
          (error: unknown) => response.writeHead(500, { 'content-type': TEXT }).end(`Could not collect metrics: ${(error as Error).message}\n`),
        );
      } else if (path === '/healthz') {
        response.writeHead(200, { 'content-type': TEXT }).end('ok\n');
      } else if (path === '/readyz') {
        void this.failingChecks().then((failing) =>
          failing.length === 0
            ? response.writeHead(200, { 'content-type': TEXT }).end('ready\n')
            : response.writeHead(503, { 'content-type': TEXT }).end(`not ready: ${failing.join(', ')} down\n`),
        );
      } else {
        response.writeHead(404, { 'content-type': TEXT }).end('Not found: GET /metrics, /healthz or /readyz\n');
      }
    });
    this.server.keepAliveTimeout = 65_000;
  }

  /** Makes `/readyz` answer 503 naming `name` while `check` fails (or throws). */
  addReadinessCheck(name: string, check: ReadinessCheck): void {
    this.checks.set(name, check);
  }

  private async failingChecks(): Promise<string[]> {
    const results = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          return (await check()) ? null : name;
        } catch {
          return name;
        }
      }),
    );
    return results.filter((name): name is string => name !== null);
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      const fail = (error: Error): void =>
        reject(new Error(`The metrics server cannot listen on ${this.host}:${this.port} (METRICS_HOST / METRICS_PORT): ${error.message}`));
      this.server.once('error', fail);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', fail);
        resolve();
      });
    });
  }

  /** The address it listens on, e.g. `http://127.0.0.1:9464` (the real port when configured with 0). */
  get url(): string {
    const address = this.server.address() as AddressInfo | null;
    if (!address) throw new Error('the metrics server is not listening');
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  close(): Promise<void> {
    if (!this.server.listening) return Promise.resolve();
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
