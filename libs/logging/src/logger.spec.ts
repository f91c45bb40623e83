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

  it('writes fixed-field lines with the service, context and request id, and leaves the other loggers redacting', () => {
    const { lines, stream } = capture();
    const logger = new PinoNestLogger(createRootLogger('edge', 'info', stream));
    const accessLog = logger.forFixedFields('Http');
    runWithRequestId('req-7', () => accessLog.info({ method: 'POST', path: '/a2a', status: 200 }, 'request completed'));
    expect(lines[0]).toMatchObject({ service: 'edge', context: 'Http', request_id: 'req-7', method: 'POST', path: '/a2a', status: 200 });
    logger.forContext('Http').info({ api_key: 'ah_live_SECRET' }, 'x');
    expect(lines[1].api_key).toBe('[redacted]');
  });

  it("writes Nest's start-up lines (modules, routes) at debug, and other info lines at info", () => {
    const { lines, stream } = capture();
    const logger = new PinoNestLogger(createRootLogger('edge', 'info', stream));
    logger.log('Mapped {/a2a, POST} route', 'RouterExplorer');
    logger.log('EdgeModule dependencies initialized', 'InstanceLoader');
    logger.log('edge listening on http://127.0.0.1:8080', 'Bootstrap');
    expect(lines.map((line) => line.msg)).toEqual(['edge listening on http://127.0.0.1:8080']);
    const debug = capture();
    new PinoNestLogger(createRootLogger('edge', 'debug', debug.stream)).log('Mapped {/a2a, POST} route', 'RouterExplorer');
    expect(debug.lines[0]).toMatchObject({ level: 'debug', context: 'RouterExplorer' });
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
