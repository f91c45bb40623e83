import { connect, errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { randomUUID } from 'node:crypto';
import type { NatsServers } from '@app/config';
import { isRelayErrorBody, prefixedSubject, RelayError, type RpcReply, type RpcRequest, type RpcSubject } from '@app/contracts';
import { currentRequestId, REQUEST_ID_HEADER } from '@app/logging';
import type { NatsClientMetrics } from '@app/metrics';
import { traceNatsRequest } from '@app/tracing';
import { natsConnectOptions } from './nats-connection';
import { DEADLINE_HEADER } from './request-deadline';

export interface NatsRpcClientOptions {
  /** NATS_URL (one server or a comma-separated list), or the config's parsed servers with their credentials. */
  url: string | NatsServers;
  /** The inbox prefix this process's NATS permissions let it read replies on (natsInboxPrefix). */
  inboxPrefix?: string;
  subjectPrefix: string;
  defaultTimeoutMs: number;
  name: string;
  metrics?: NatsClientMetrics;
}

/** NATS's own default `max_payload`, assumed until the server has said otherwise. */
const DEFAULT_NATS_MAX_PAYLOAD = 1024 * 1024;

interface NestReplyPacket {
  id?: string;
  response?: unknown;
  err?: unknown;
  isDisposed?: boolean;
}

/**
 * Typed request-reply over NATS, speaking Nest's packet format. Every request has a timeout, and
 * carries the instant it ends as its deadline (a service does not start a request past it);
 * "no responders" and "timeout" become distinct RelayErrors, and a service's RelayError comes back
 * as the same RelayError.
 */
export class NatsRpcClient {
  private constructor(
    readonly connection: NatsConnection,
    private readonly options: NatsRpcClientOptions,
  ) {}

  static async connect(options: NatsRpcClientOptions): Promise<NatsRpcClient> {
    // No async stack traces: the client would build them for every request, and they only ever show NATS internals.
    const connection = await connect({
      ...natsConnectOptions(options.url, options.inboxPrefix),
      name: options.name,
      maxReconnectAttempts: -1,
      noAsyncTraces: true,
    });
    return new NatsRpcClient(connection, options);
  }

  /** How long a request waits for its answer unless told otherwise. */
  get defaultTimeoutMs(): number {
    return this.options.defaultTimeoutMs;
  }

  get subjectPrefix(): string {
    return this.options.subjectPrefix;
  }

  /** The largest message the NATS server accepts (its `max_payload`, read at connect). */
  get maxPayloadBytes(): number {
    return this.connection.info?.max_payload ?? DEFAULT_NATS_MAX_PAYLOAD;
  }

  isConnected(): boolean {
    return !this.connection.isClosed();
  }

  request<S extends RpcSubject>(subject: S, payload: RpcRequest<S>, timeoutMs = this.options.defaultTimeoutMs): Promise<RpcReply<S>> {
    const metrics = this.options.metrics;
    return metrics ? metrics.timed(subject, performance.now(), this.exchange(subject, payload, timeoutMs)) : this.exchange(subject, payload, timeoutMs);
  }

  private async exchange<S extends RpcSubject>(subject: S, payload: RpcRequest<S>, timeoutMs: number): Promise<RpcReply<S>> {
    const headers = natsHeaders();
    headers.set(REQUEST_ID_HEADER, currentRequestId() ?? randomUUID());
    headers.set(DEADLINE_HEADER, String(Date.now() + timeoutMs));
    const packet = JSON.stringify({ pattern: subject, data: payload, id: randomUUID() });
    const packetBytes = Buffer.byteLength(packet);
    if (packetBytes > this.maxPayloadBytes) {
      // Refused here, before any service sees it: NATS would refuse to publish it anyway.
      throw new RelayError('payload_too_large', `The request is too large for the relay (${packetBytes} bytes internally, at most ${this.maxPayloadBytes})`, {
        limit_bytes: this.maxPayloadBytes,
      });
    }
    let reply;
    try {
      const send = () => this.connection.request(prefixedSubject(this.options.subjectPrefix, subject), packet, { timeout: timeoutMs, headers });
      reply = await traceNatsRequest(subject, headers, send);
    } catch (error) {
      throw this.mapTransportError(subject, error);
    }
    const decoded = reply.json<NestReplyPacket>();
    if (decoded.err !== undefined && decoded.err !== null) {
      if (isRelayErrorBody(decoded.err)) throw RelayError.fromBody(decoded.err);
      throw new RelayError('internal_error', `The ${serviceOf(subject)} service failed to answer ${subject}`);
    }
    return decoded.response as RpcReply<S>;
  }

  async drain(): Promise<void> {
    if (!this.connection.isClosed()) await this.connection.drain();
  }

  private mapTransportError(subject: string, error: unknown): RelayError {
    const service = serviceOf(subject);
    if (error instanceof errors.NoRespondersError || (error instanceof errors.RequestError && error.isNoResponders())) {
      return new RelayError('service_unavailable', `The ${service} service is unavailable (no responders on ${subject})`, { service });
    }
    if (error instanceof errors.TimeoutError) {
      return new RelayError('service_timeout', `The ${service} service did not answer ${subject} in time`, { service });
    }
    return new RelayError('service_unavailable', `NATS request to the ${service} service failed: ${(error as Error).message}`, { service });
  }
}

function serviceOf(subject: string): string {
  return subject.split('.')[1] ?? 'unknown';
}
