import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

/**
 * `GET /metrics` in the Prometheus text format on a port of its own (never the edge's public one):
 * a plain node:http server, so scraping costs the service nothing but the rendering.
 */
export class MetricsServer {
  private readonly server: Server;

  constructor(
    private readonly registry: Registry,
    private readonly host: string,
    private readonly port: number,
  ) {
    this.server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0];
      if (path !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at GET /metrics\n');
        return;
      }
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
        return;
      }
      this.registry.metrics().then(
        (text) => response.writeHead(200, { 'content-type': this.registry.contentType }).end(request.method === 'HEAD' ? undefined : text),
        (error: unknown) => response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end(`Could not collect metrics: ${(error as Error).message}\n`),
      );
    });
    this.server.keepAliveTimeout = 65_000;
  }

  listen(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.port, this.host, () => {
        this.server.off('error', reject);
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
