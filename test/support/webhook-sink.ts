import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SinkResponse {
  status: number;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface SinkRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  receivedAt: number;
  /** The status the sink answered (or was about to answer, if the client went away). */
  status: number;
}

/**
 * A tiny HTTP server on 127.0.0.1 that records every request and answers from a per-path plan
 * (e.g. 500 then 200, always 500, slow); the last planned answer repeats. Unplanned paths get 200.
 */
export class WebhookSink {
  readonly requests: SinkRequest[] = [];
  private readonly plans = new Map<string, SinkResponse[]>();
  /** Answers still waiting out their delay: stop() clears them, so none keeps the process alive. */
  private readonly delayed = new Set<NodeJS.Timeout>();

  private constructor(private readonly server: Server) {}

  static async start(): Promise<WebhookSink> {
    const server = createServer();
    const sink = new WebhookSink(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        const answer = sink.nextAnswer(path);
        sink.requests.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAt: Date.now(), status: answer.status });
        const send = (): void => {
          if (response.destroyed) return;
          response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
          response.end(answer.status < 300 ? 'ok' : 'no');
        };
        if (!answer.delayMs) return send();
        const timer = setTimeout(() => {
          sink.delayed.delete(timer);
          send();
        }, answer.delayMs);
        sink.delayed.add(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path: string): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Answers the next requests to `path` with these responses, in order; the last one repeats. */
  plan(path: string, responses: SinkResponse[]): void {
    this.plans.set(path, [...responses]);
  }

  to(path: string): SinkRequest[] {
    return this.requests.filter((request) => request.path === path);
  }

  async stop(): Promise<void> {
    for (const timer of this.delayed) clearTimeout(timer);
    this.delayed.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private nextAnswer(path: string): SinkResponse {
    const plan = this.plans.get(path);
    if (!plan || plan.length === 0) return { status: 200 };
    return plan.length > 1 ? plan.shift()! : plan[0];
  }
}
