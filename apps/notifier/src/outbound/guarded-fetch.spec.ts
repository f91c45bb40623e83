import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AnswerTooLargeError, causeOf, DeadlineExceededError, guardedFetch, ReadAnswer } from './guarded-fetch';
import { SsrfRefusedError } from './ssrf-guard';

/** A loopback server answering every request with `answer`; counts the bytes it managed to send and the connections made to it. */
async function serve(
  answer: (response: ServerResponse, sent: (bytes: number) => void) => void,
): Promise<{ url: string; sent: () => number; connections: () => number; stop: () => Promise<void> }> {
  let bytes = 0;
  let connections = 0;
  const server: Server = createServer((_request: IncomingMessage, response: ServerResponse) => answer(response, (count) => (bytes += count)));
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    sent: () => bytes,
    connections: () => connections,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Writes `total` bytes of `fill` in 64 KiB chunks, waiting for the socket to drain, until done or the client goes. */
function stream(response: ServerResponse, sent: (bytes: number) => void, total: number, fill = 'x'): void {
  const chunk = Buffer.alloc(64 * 1024, fill);
  let left = total;
  const write = (): void => {
    while (left > 0 && !response.destroyed) {
      const size = Math.min(left, chunk.length);
      left -= size;
      sent(size);
      if (!response.write(chunk.subarray(0, size))) return void response.once('drain', write);
    }
    if (!response.destroyed) response.end();
  };
  write();
}

const options = { allowPrivate: true, userAgent: 'test', timeoutMs: 1000, maxAnswerBytes: 256 * 1024 };

describe('guardedFetch: one deadline and a byte limit per exchange', () => {
  const servers: Array<{ stop: () => Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('cuts off an answer whose headers came at once and whose body drips past the deadline', async () => {
    const server = await serve((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{');
      const drip = setInterval(() => (response.destroyed ? clearInterval(drip) : response.write(' ')), 100);
      response.on('close', () => clearInterval(drip));
    });
    servers.push(server);
    const startedAt = Date.now();
    const error = await guardedFetch(options)(server.url, { method: 'POST', body: '{}' }).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(causeOf(error, DeadlineExceededError)).not.toBeNull();
    // Ended by the deadline, not by the server (which drips for ever).
    expect(Date.now() - startedAt).toBeLessThan(30_000);
  });

  it('refuses an answer that declares more bytes than the limit before reading it', async () => {
    const server = await serve((response, sent) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(200 * 1024 * 1024) });
      stream(response, sent, 200 * 1024 * 1024);
    });
    servers.push(server);
    await expect(guardedFetch(options)(server.url)).rejects.toBeInstanceOf(AnswerTooLargeError);
  });

  it('reads a 200 MB answer without a length only up to the limit, then closes the connection', async () => {
    const server = await serve((response, sent) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      stream(response, sent, 200 * 1024 * 1024);
    });
    servers.push(server);
    const error = await guardedFetch({ ...options, timeoutMs: 30_000 })(server.url).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(causeOf(error, AnswerTooLargeError)?.limitBytes).toBe(options.maxAnswerBytes);
    // What the server could write before the connection closed: the limit and the sockets' buffers, far from 200 MB.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(server.sent()).toBeLessThan(32 * 1024 * 1024);
  });

  it('holds each event of a stream to the limit, not the stream as a whole, and not to the deadline', async () => {
    const event = `data: ${'y'.repeat(100 * 1024)}\n\n`;
    const server = await serve((response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let count = 0;
      const next = setInterval(() => {
        count += 1;
        // Five events of 100 KiB each (500 KiB in all), over more than the deadline; then one too large.
        response.write(count <= 5 ? event : `data: ${'z'.repeat(300 * 1024)}\n\n`);
        if (count > 5) clearInterval(next);
      }, 300);
      response.on('close', () => clearInterval(next));
    });
    servers.push(server);
    const response = await guardedFetch(options)(server.url, { headers: { accept: 'text/event-stream' } });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    let received = 0;
    const error = await (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return null;
          received += value.length;
        }
      } catch (thrown) {
        return thrown;
      }
    })();
    expect(causeOf(error, AnswerTooLargeError)).not.toBeNull();
    expect(received).toBeGreaterThanOrEqual(5 * Buffer.byteLength(event));
  });

  it('fails an answer whose connection closes before its end, and hands on a whole one with its bytes', async () => {
    const cut = await serve((response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
      response.write('{"partial": ');
      setTimeout(() => response.destroy(), 50);
    });
    servers.push(cut);
    await expect(guardedFetch(options)(cut.url)).rejects.toThrow();
    const whole = await serve((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"whole": ');
      setTimeout(() => response.end('true}'), 50);
    });
    servers.push(whole);
    const answer = await guardedFetch(options)(whole.url);
    expect(answer).toBeInstanceOf(ReadAnswer);
    expect((answer as ReadAnswer).bytes.toString()).toBe('{"whole": true}');
    expect(await answer.json()).toEqual({ whole: true });
  });

  it('ends an exchange whose headers never come at the deadline', async () => {
    const server = await serve(() => undefined);
    servers.push(server);
    await expect(guardedFetch(options)(server.url)).rejects.toBeInstanceOf(DeadlineExceededError);
  });
});

describe('guardedFetch: connections kept between requests', () => {
  const answeringEmpty = () =>
    serve((response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{}');
    });

  it('with keepAlive, sends requests one after another on one connection; without it, one connection each', async () => {
    const server = await answeringEmpty();
    try {
      const kept = guardedFetch({ ...options, keepAlive: true });
      for (let request = 0; request < 5; request++) expect(await (await kept(server.url, { method: 'POST', body: '{}' })).json()).toEqual({});
      expect(server.connections()).toBe(1);
      const fresh = guardedFetch(options);
      for (let request = 0; request < 3; request++) expect(await (await fresh(server.url, { method: 'POST', body: '{}' })).json()).toEqual({});
      expect(server.connections()).toBe(4);
    } finally {
      await server.stop();
    }
  });

  it('still refuses a private address for a kept fetch', async () => {
    const server = await answeringEmpty();
    try {
      const kept = guardedFetch({ ...options, allowPrivate: false, keepAlive: true });
      // By address, and by a name that resolves to one when the connection is made.
      await expect(kept(server.url)).rejects.toBeInstanceOf(SsrfRefusedError);
      await expect(kept(server.url.replace('127.0.0.1', 'localhost'))).rejects.toBeInstanceOf(SsrfRefusedError);
      expect(server.connections()).toBe(0);
    } finally {
      await server.stop();
    }
  });
});
