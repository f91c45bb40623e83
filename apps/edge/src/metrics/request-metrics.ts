import { Inject, Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Dialect } from '@app/a2a';
import { HttpMetrics, outcomeOfStatus } from '@app/metrics';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once the JSON-RPC endpoint knows them; the access metrics label the request with them. */
    rpcMethod: string | null;
    rpcDialect: string | null;
    rpcOutcome: string | null;
  }
}

/** The metric label of a dialect. */
export function dialectLabel(dialect: Dialect): string {
  if (dialect.kind === 'agentrelay') return 'agentrelay';
  return dialect.version === '1.0' ? 'a2a_1.0' : 'a2a_0.3';
}

/**
 * Counts and times every HTTP request when its response ends, labelled with what the JSON-RPC
 * endpoint noted about the call (canonical method, dialect, error reason) on the request.
 */
@Injectable()
export class RequestMetrics {
  constructor(@Inject(HttpMetrics) private readonly http: HttpMetrics) {}

  install(fastify: FastifyInstance): void {
    fastify.decorateRequest('rpcMethod', null);
    fastify.decorateRequest('rpcDialect', null);
    fastify.decorateRequest('rpcOutcome', null);
    fastify.addHook('onResponse', (request, reply, done) => {
      this.observe(request, reply);
      done();
    });
  }

  /** The call is a `canonical` method in `dialect`. */
  identify(request: FastifyRequest, canonical: string, dialect: Dialect): void {
    request.rpcMethod = canonical;
    request.rpcDialect = dialectLabel(dialect);
  }

  /** The call failed with `reason` (it is rendered in `dialect`). */
  failed(request: FastifyRequest, dialect: Dialect, reason: string): void {
    request.rpcDialect = dialectLabel(dialect);
    request.rpcOutcome = reason;
  }

  streamOpened(): void {
    this.http.streamOpened();
  }

  streamClosed(): void {
    this.http.streamClosed();
  }

  streamStalled(): void {
    this.http.streamStalled();
  }

  watchStreamBuffers(read: () => number): void {
    this.http.watchStreamBuffers(read);
  }

  private observe(request: FastifyRequest, reply: FastifyReply): void {
    const route = request.routeOptions.url ?? 'unmatched';
    const seconds = reply.elapsedTime / 1000;
    if (request.rpcDialect === null) {
      this.http.observe(route, request.method, 'none', outcomeOfStatus(reply.statusCode), reply.statusCode, seconds);
    } else {
      this.http.observe(route, request.rpcMethod ?? 'unknown', request.rpcDialect, request.rpcOutcome ?? 'ok', reply.statusCode, seconds);
    }
  }
}
