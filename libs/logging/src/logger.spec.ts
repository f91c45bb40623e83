import { Writable } from 'node:stream';
import { createRootLogger, PinoNestLogger } from './logger';
import { runWithRequestId } from './request-context';

function capture(): { lines: Record<string, unknown>[]; stream: Writable } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      callback();
    },
  });
  return { lines, stream };
}

describe('logger', () => {
  it('writes JSON with the service, the class context and the request id', () => {
    const { lines, stream } = capture();
    const logger = new PinoNestLogger(createRootLogger('edge', 'info', stream));
    runWithRequestId('req-42', () => logger.log('hello', 'HealthController'));
    expect(lines[0]).toMatchObject({ service: 'edge', context: 'HealthController', request_id: 'req-42', msg: 'hello', level: 'info' });
  });

  it('redacts keys, tokens and secrets', () => {
    const { lines, stream } = capture();
    const root = createRootLogger('edge', 'info', stream);
    root.info({ headers: { authorization: 'Bearer ah_live_SECRET', 'x-api-key': 'ah_live_SECRET' }, api_key: 'ah_live_SECRET' });
    const text = JSON.stringify(lines);
    expect(text).not.toContain('SECRET');
    expect(text).toContain('[redacted]');
  });

  it('replaces an unsafe caller request id by a generated one', () => {
    const { lines, stream } = capture();
    const logger = new PinoNestLogger(createRootLogger('edge', 'info', stream));
    runWithRequestId('bad id\nwith newline', () => logger.warn('x', 'Ctx'));
    expect(lines[0].request_id).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('logger with an object message', () => {
  it('keeps the text that follows the object as the message', () => {
    const { lines, stream } = capture();
    const logger = new PinoNestLogger(createRootLogger('tasks', 'info', stream));
    logger.log({ subject: 'relay.tasks.v1.get', duration_ms: 1.5 }, 'request handled', 'Rpc');
    expect(lines[0]).toMatchObject({ context: 'Rpc', subject: 'relay.tasks.v1.get', duration_ms: 1.5, msg: 'request handled' });
  });
});
