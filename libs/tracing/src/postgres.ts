import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import pg from 'pg';
import { endSpan, endWith } from './spans';
import { activeServiceTracer } from './service-tracers';

type QueryFunction = (this: pg.Client, ...args: unknown[]) => unknown;

const WRAPPED = Symbol.for('agentrelay.tracing.pg-query');

/** The statement of a `query` call: its text and, for a prepared statement, its name. */
function statementOf(first: unknown): { text: string; name?: string } {
  if (typeof first === 'string') return { text: first };
  const config = first as { text?: unknown; name?: unknown } | null;
  return { text: typeof config?.text === 'string' ? config.text : '', name: typeof config?.name === 'string' ? config.name : undefined };
}

/** `SELECT`, `INSERT`, `WITH`…: the statement's first word, a bounded span name. */
function operationOf(text: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(text);
  return match ? match[1].toUpperCase() : 'QUERY';
}

function startQuerySpan(first: unknown): Span | undefined {
  const parent = context.active();
  const tracer = activeServiceTracer(parent);
  if (!tracer || !trace.getSpan(parent)) return undefined;
  const { text, name } = statementOf(first);
  const operation = operationOf(text);
  return tracer.tracer.startSpan(
    name ? `${operation} ${name}` : operation,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': text, ...(name ? { 'db.query.summary': name } : {}) },
    },
    parent,
  );
}

/**
 * Wraps `query` of pg's Client once per process, so every query made inside a traced request
 * (TypeORM's, and a Pool's, which go through a Client) is a client span of it. Queries outside
 * any traced request (pollers, LISTEN) make no span.
 */
export function tracePostgresQueries(): void {
  const prototype = pg.Client.prototype as unknown as Record<string | symbol, unknown>;
  if (prototype[WRAPPED]) return;
  const original = prototype.query as QueryFunction;
  prototype.query = function tracedQuery(this: pg.Client, ...args: unknown[]): unknown {
    const span = startQuerySpan(args[0]);
    if (!span) return original.apply(this, args);
    const callbackIndex = args.length - 1;
    const callback = args[callbackIndex];
    if (typeof callback === 'function') {
      args[callbackIndex] = (error: unknown, result: unknown) => {
        endSpan(span, error);
        return (callback as (error: unknown, result: unknown) => unknown)(error, result);
      };
      return original.apply(this, args);
    }
    let result: unknown;
    try {
      result = original.apply(this, args);
    } catch (error) {
      endSpan(span, error);
      throw error;
    }
    if (result && typeof (result as Promise<unknown>).then === 'function') return endWith(span, result as Promise<unknown>);
    // A submittable (cursor, stream): its rows arrive later; the span covers handing it over.
    span.end();
    return result;
  };
  prototype[WRAPPED] = true;
}
