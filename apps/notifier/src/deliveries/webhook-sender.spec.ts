import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sendWebhook } from './webhook-sender';

/** A loopback receiver that answers 200 at once and then does `body` with the answer; counts the bytes it sent. */
async function receiver(body: (response: ServerResponse, sent: (bytes: number) => void) => void) {
  let bytes = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/plain' });
      body(response, (count) => (bytes += count));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    sent: () => bytes,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const options = { timeoutMs: 1000, maxResponseBytes: 64 * 1024, allowPrivate: true, userAgent: 'test' };

describe('sendWebhook: the deadline and the byte limit cover the answer’s body', () => {
  it('ends an exchange whose answer drips after its headers at the deadline', async () => {
    const hook = await receiver((response) => {
      const drip = setInterval(() => (response.destroyed ? clearInterval(drip) : response.write('.')), 100);
      response.on('close', () => clearInterval(drip));
    });
    try {
      const outcome = await sendWebhook({ url: hook.url, headers: {}, body: '{}' }, options);
      expect(outcome).toMatchObject({ ok: false, retryable: true, error: expect.stringMatching(/timed out after 1000 ms/) });
    } finally {
      await hook.stop();
    }
  });

  it('stops reading a 200 MB answer at the limit and keeps the status', async () => {
    const hook = await receiver((response, sent) => {
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let left = 200 * 1024 * 1024;
      const write = (): void => {
        while (left > 0 && !response.destroyed) {
          left -= chunk.length;
          sent(chunk.length);
          if (!response.write(chunk)) return void response.once('drain', write);
        }
        if (!response.destroyed) response.end();
      };
      write();
    });
    try {
      const outcome = await sendWebhook({ url: hook.url, headers: {}, body: '{}' }, { ...options, timeoutMs: 30_000 });
      expect(outcome).toMatchObject({ ok: true, statusCode: 200 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(hook.sent()).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await hook.stop();
    }
  });
});
