import { Inject, Injectable, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CanonicalMethod, Dialect } from '@app/a2a';
import { retryAfterSeconds, type AgentIdentity, type RelayError } from '@app/contracts';
import { annotateRpcError, annotateRpcMethod } from '@app/tracing';
import { bearerChallenge } from '../auth/token-verifier';
import { asRelayError } from '../errors/json-rpc-errors';
import { RequestMetrics } from '../metrics/request-metrics';
import { EventStream } from '../streams/task-streams';
import { CallerGate } from './caller-gate';
import { SseWriter, type SseFraming } from './sse-writer';

/** The methods answered with a stream, which hold a connection open: RELAY_STREAMS_PER_AGENT bounds them. */
const STREAMING: ReadonlySet<CanonicalMethod> = new Set(['stream', 'resubscribe', 'watch']);

/** One call read from its request by its binding, its caller admitted, ready to run. */
export interface PreparedCall {
  caller: AgentIdentity;
  canonical: CanonicalMethod;
  dialect: Dialect;
  execute: () => Promise<unknown>;
  /** How the binding frames each event and the error that ends a stream. */
  framing: SseFraming;
}

/**
 * What one binding (JSON-RPC, HTTP+JSON v1.0 or v0.3) knows of a call: how it is read from the
 * request and how its answers are written. One instance per request: `dialect` is the one errors
 * are rendered in so far, and grows more precise as the call is read.
 */
export interface AgentCallBinding {
  readonly dialect: Dialect;
  /** Reads the call, admitting its caller with `admit` where the binding's order of checks says. */
  prepare(admit: () => Promise<AgentIdentity>): Promise<PreparedCall>;
  sendResult(reply: FastifyReply, result: unknown): void;
  /** Writes a refusal; `streaming` when the call asked for a stream. */
  sendError(reply: FastifyReply, error: RelayError, streaming: boolean): void;
}

/** The headers every refusal carries when they apply: the authentication challenge and `Retry-After`. */
export function setRefusalHeaders(reply: FastifyReply, error: RelayError): void {
  if (error.reason === 'unauthenticated') reply.header('www-authenticate', bearerChallenge(error));
  const retryAfter = retryAfterSeconds(error);
  if (retryAfter !== undefined) reply.header('retry-after', String(retryAfter));
}

/**
 * One agent call from the HTTP request to its reply, whatever binding carries it: the caller gate
 * (API key, rate limit), metrics and tracing, the stream slot, the method, the stream or the
 * answer, and one path for every refusal.
 */
@Injectable()
export class AgentCallPipeline {
  private readonly logger = new Logger(AgentCallPipeline.name);

  constructor(
    @Inject(CallerGate) private readonly gate: CallerGate,
    @Inject(SseWriter) private readonly sse: SseWriter,
    @Inject(RequestMetrics) private readonly metrics: RequestMetrics,
  ) {}

  async run(request: FastifyRequest, reply: FastifyReply, binding: AgentCallBinding): Promise<void> {
    let streaming = false;
    try {
      const call = await binding.prepare(() => this.gate.admit(request, reply));
      streaming = STREAMING.has(call.canonical);
      this.metrics.identify(request, call.canonical, call.dialect);
      annotateRpcMethod(call.canonical, call.dialect.kind);
      // Reserved before the method runs: a send refused for want of a slot has not been sent.
      const releaseStreamSlot = streaming ? this.sse.reserveSlot(call.caller) : undefined;
      try {
        const result = await call.execute();
        if (reply.sent) {
          if (result instanceof EventStream) result.release();
          return;
        }
        if (result instanceof EventStream) {
          await this.sse.write(reply, result, call.framing, releaseStreamSlot);
          return;
        }
        binding.sendResult(reply, result);
      } finally {
        releaseStreamSlot?.();
      }
    } catch (error) {
      if (reply.sent) {
        this.logger.warn({ err: error }, 'error after the reply was sent');
        return;
      }
      const relayError = asRelayError(error);
      this.metrics.failed(request, binding.dialect, relayError.reason);
      annotateRpcError(relayError.reason);
      binding.sendError(reply, relayError, streaming);
    }
  }
}
