import type { LoggerService } from '@nestjs/common';
import { trace } from '@opentelemetry/api';
import pino, { type Logger } from 'pino';
import { currentRequestId } from './request-context';

/** Fields that never reach a log line in clear. */
export const REDACTED_PATHS = [
  'authorization',
  'Authorization',
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'api_key',
  '*.api_key',
  'apiKey',
  '*.apiKey',
  'token',
  '*.token',
  'credentials',
  '*.credentials',
  'webhook_secret',
  '*.webhook_secret',
  'secret',
  '*.secret',
  'password',
  '*.password',
];

/** Where a process writes its log lines (stdout unless a destination is given, e.g. by tests). */
export interface LoggingOptions {
  logDestination?: pino.DestinationStream;
}

/** Lines are written to stdout in chunks of this many bytes, and at least once a second. */
const STDOUT_CHUNK_BYTES = 4096;
const STDOUT_FLUSH_MS = 1000;

/**
 * Stdout for log lines, written asynchronously in chunks instead of one write per line (a busy
 * service logs several lines per request); flushed every second when lines were written, and when
 * the process exits. (A flush with nothing buffered still writes: an idle logger would write every
 * second, and such writes kept a process that started many services, as a test worker, from exiting.)
 */
function bufferedStdout(): pino.DestinationStream {
  const stream = pino.destination({ dest: 1, sync: false, minLength: STDOUT_CHUNK_BYTES });
  let written = false;
  const write = stream.write.bind(stream);
  stream.write = (line: string): boolean => {
    written = true;
    return write(line);
  };
  const timer = setInterval(() => {
    if (!written) return;
    written = false;
    try {
      stream.flush();
    } catch {
      clearInterval(timer);
    }
  }, STDOUT_FLUSH_MS).unref();
  return stream;
}

/** The request id and, while a span is active, its trace and span ids: on every line. */
function logContext(): Record<string, string> {
  const requestId = currentRequestId();
  const fields: Record<string, string> = requestId ? { request_id: requestId } : {};
  const span = trace.getActiveSpan();
  if (span) {
    const { traceId, spanId } = span.spanContext();
    fields.trace_id = traceId;
    fields.span_id = spanId;
  }
  return fields;
}

export function createRootLogger(service: string, level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service },
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: logContext,
    },
    destination ?? bufferedStdout(),
  );
}

/**
 * Nest's own start-up lines (each module initialised, each route mapped: about a hundred at the
 * edge), which say nothing an operator acts on: written at debug instead of info.
 */
const NEST_STARTUP_CONTEXTS = new Set(['NestFactory', 'InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestApplication', 'NestMicroservice']);

/** Nest's LoggerService on top of pino: one child logger per context (class). */
export class PinoNestLogger implements LoggerService {
  private readonly children = new Map<string, Logger>();

  constructor(private readonly root: Logger) {}

  forContext(context: string): Logger {
    let child = this.children.get(context);
    if (!child) {
      child = this.root.child({ context });
      this.children.set(context, child);
    }
    return child;
  }

  /**
   * A child for lines whose fields are fixed and never secret (the edge's access log: request id,
   * method, path without its query, status, duration). It skips the redaction pass, which costs
   * several times the rest of writing such a line; never give it a request's headers or body.
   */
  forFixedFields(context: string): Logger {
    return this.root.child({ context }, { redact: { paths: [] } });
  }

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    this.write(typeof context === 'string' && NEST_STARTUP_CONTEXTS.has(context) ? 'debug' : 'info', message, rest);
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }

  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }

  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }

  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }

  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    const context = typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : 'Nest';
    const logger = this.forContext(context);
    if (message instanceof Error) {
      logger[level]({ err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      const text = rest.find((item): item is string => typeof item === 'string');
      if (text === undefined) logger[level](message as object);
      else logger[level](message as object, text);
    } else {
      const stack = rest.find((item) => typeof item === 'string');
      logger[level](stack ? { stack } : {}, String(message));
    }
  }
}
