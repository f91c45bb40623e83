import { Writable } from 'node:stream';
import request from 'supertest';
import { registerAgent, uniqueHandle } from './support/agents';
import { eventually } from './support/eventually';
import { RelayHarness } from './support/relay-harness';

type LogLine = Record<string, unknown>;

describe('request logging: one request id from the HTTP call through NATS into every service', () => {
  const lines: LogLine[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as LogLine);
      callback();
    },
  });
  let relay: RelayHarness;

  beforeAll(async () => {
    relay = await RelayHarness.start({ env: { LOG_LEVEL: 'debug' }, logDestination: destination });
  });

  afterAll(async () => {
    await relay.stop();
  });

  it('logs the call at the edge and in the directory and tasks services under the caller’s request id, with no key in clear', async () => {
    const bob = await registerAgent(relay, { handle: uniqueHandle('bob', 'logs'), name: 'Bob' });
    const frank = await registerAgent(relay, { handle: uniqueHandle('frank', 'logs'), name: 'Frank' });
    const response = await request(relay.url)
      .post('/a2a')
      .set('authorization', `Bearer ${bob.api_key}`)
      .set('x-request-id', 'trace-handoff-42')
      .send({ jsonrpc: '2.0', id: 1, method: 'message/send', params: { recipient: frank.agent.handle, message: { parts: [{ type: 'text', text: 'hello' }] } } })
      .expect(200);
    expect(response.headers['x-request-id']).toBe('trace-handoff-42');

    const traced = await eventually((): LogLine[] => {
      const mine = lines.filter((line) => line.request_id === 'trace-handoff-42');
      expect([...new Set(mine.map((line) => line.service))]).toEqual(expect.arrayContaining(['edge', 'directory', 'tasks']));
      return mine;
    });
    expect(traced.find((line) => line.service === 'edge' && line.context === 'Http')).toMatchObject({ method: 'POST', path: '/a2a', status: 200 });
    const handled = traced.filter((line) => line.context === 'Rpc').map((line) => `${line.service} ${line.subject}`);
    expect(handled).toEqual(
      expect.arrayContaining([
        `directory ${relay.subjectPrefix}.relay.directory.v1.authenticate`,
        `directory ${relay.subjectPrefix}.relay.directory.v1.admit`,
        `tasks ${relay.subjectPrefix}.relay.tasks.v1.send`,
      ]),
    );
    const rpcLines = traced.filter((line) => line.context === 'Rpc');
    expect(rpcLines.every((line) => line.outcome === 'ok' && typeof line.duration_ms === 'number')).toBe(true);
    // A handled request is a debug line in the services: at info only the edge's access line records it.
    expect(rpcLines.every((line) => line.level === 'debug')).toBe(true);
    expect(traced.find((line) => line.context === 'Http')).toMatchObject({ level: 'info' });
    expect(JSON.stringify(lines)).not.toContain(bob.api_key);
  });

  it('logs a failed request with its reason', async () => {
    await request(relay.url)
      .post('/a2a')
      .set('x-api-key', `ah_live_${'A'.repeat(32)}`)
      .set('x-request-id', 'trace-bad-key')
      .send({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { task_id: 'x' } })
      .expect(401);
    const failed = await eventually(() => {
      const found = lines.find((line) => line.request_id === 'trace-bad-key' && line.service === 'directory');
      expect(found).toBeDefined();
      return found;
    });
    expect(failed).toMatchObject({
      context: 'Rpc',
      subject: `${relay.subjectPrefix}.relay.directory.v1.authenticate`,
      outcome: 'error',
      reason: 'unauthenticated',
      level: 'info',
    });
  });
});
