/**
 * The load generator: JSON POSTs over keep-alive `node:http` connections (one agent per target, so
 * each server gets its own pool) and a closed-loop runner with a fixed number of clients, bounded
 * both in requests and in time.
 */
import { Agent, request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';

export interface JsonReply {
  status: number;
  json: Record<string, unknown> | undefined;
}

export class HttpClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 256, keepAliveMsecs: 10000 });
  private readonly host: string;
  private readonly port: number;

  constructor(
    baseUrl: string,
    private readonly timeoutMs = 15000,
  ) {
    const url = new URL(baseUrl);
    this.host = url.hostname;
    this.port = Number(url.port || 80);
  }

  post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonReply> {
    return this.send('POST', path, JSON.stringify(body), headers);
  }

  get(path: string, headers: Record<string, string> = {}): Promise<JsonReply> {
    return this.send('GET', path, undefined, headers);
  }

  /**
   * POSTs a request answered with Server-Sent Events and reads events (their data and id) until `enough` says so (true)
   * or the stream ends (false); the connection is closed either way.
   */
  readEvents(path: string, body: unknown, headers: Record<string, string>, enough: (data: unknown, id: string | undefined) => boolean): Promise<boolean> {
    const payload = JSON.stringify(body);
    return new Promise((resolve, reject) => {
      let buffered = '';
      let done = false;
      const finish = (value: boolean): void => {
        if (done) return;
        done = true;
        req.destroy();
        resolve(value);
      };
      const req = httpRequest(
        {
          host: this.host,
          port: this.port,
          method: 'POST',
          path,
          headers: { ...headers, accept: 'text/event-stream', 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
          timeout: this.timeoutMs,
        },
        (res) => {
          if (res.statusCode !== 200) {
            res.resume();
            return reject(new Error(`${path} answered HTTP ${res.statusCode}`));
          }
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffered += chunk;
            let end: number;
            while (!done && (end = buffered.indexOf('\n\n')) >= 0) {
              const event = buffered.slice(0, end);
              buffered = buffered.slice(end + 2);
              const lines = event.split('\n');
              const field = (name: string): string[] => lines.filter((line) => line.startsWith(`${name}:`)).map((line) => line.slice(name.length + 1).trim());
              const data = field('data').join('\n');
              if (data && enough(JSON.parse(data), field('id')[0])) finish(true);
            }
          });
          res.on('end', () => finish(false));
          res.on('error', (error) => (done ? undefined : reject(error)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`POST ${path} stream timed out after ${this.timeoutMs} ms`)));
      req.on('error', (error) => (done ? undefined : reject(error)));
      req.end(payload);
    });
  }

  close(): void {
    this.agent.destroy();
  }

  private send(method: string, path: string, payload: string | undefined, headers: Record<string, string>): Promise<JsonReply> {
    return new Promise((resolve, reject) => {
      const outgoing: Record<string, string | number> = { ...headers };
      if (payload !== undefined) {
        outgoing['content-type'] = 'application/json';
        outgoing['content-length'] = Buffer.byteLength(payload);
      }
      const req = httpRequest({ host: this.host, port: this.port, method, path, headers: outgoing, agent: this.agent, timeout: this.timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: Record<string, unknown> | undefined;
          try {
            json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out after ${this.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(payload);
    });
  }
}

/** One request of a window: `index` counts requests of the window, `slot` is the client (0…concurrency-1). */
export type Call = (index: number, slot: number) => Promise<boolean>;

export interface WindowLimits {
  concurrency: number;
  /** No request starts after this many have started. */
  maxRequests: number;
  /** No request starts after this many milliseconds… */
  maxMs: number;
  /** …unless fewer than this many have started (so a slow server still yields enough requests for its CPU figure), up to hardMaxMs. */
  minRequests?: number;
  hardMaxMs?: number;
}

export interface WindowResult {
  requests: number;
  errors: number;
  seconds: number;
  latenciesMs: number[];
  /** Messages of the first few errors, for the log. */
  errorSamples: string[];
}

/** Runs `call` from `concurrency` clients in a closed loop until a limit is reached, then waits for the in-flight calls. */
export async function runWindow(limits: WindowLimits, call: Call): Promise<WindowResult> {
  const latenciesMs: number[] = [];
  const errorSamples: string[] = [];
  let started = 0;
  let errors = 0;
  const startedAt = performance.now();
  const deadline = startedAt + limits.maxMs;
  const hardDeadline = startedAt + Math.max(limits.maxMs, limits.hardMaxMs ?? limits.maxMs);
  const minRequests = limits.minRequests ?? 0;
  const more = (): boolean => {
    if (started >= limits.maxRequests) return false;
    const now = performance.now();
    return now < deadline || (started < minRequests && now < hardDeadline);
  };
  await Promise.all(
    Array.from({ length: limits.concurrency }, async (_, slot) => {
      while (more()) {
        const index = started++;
        const began = performance.now();
        let ok = false;
        try {
          ok = await call(index, slot);
        } catch (error) {
          if (errorSamples.length < 3) errorSamples.push(error instanceof Error ? error.message : String(error));
        }
        latenciesMs.push(performance.now() - began);
        if (!ok) errors++;
      }
    }),
  );
  return { requests: latenciesMs.length, errors, seconds: (performance.now() - startedAt) / 1000, latenciesMs, errorSamples };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
