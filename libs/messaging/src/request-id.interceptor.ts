import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { isRelayErrorBody, RelayError } from '@app/contracts';
import { currentRequestId, REQUEST_ID_HEADER, runWithRequestId, type Logger } from '@app/logging';
import type { NatsHandlerMetrics } from '@app/metrics';
import { runInServerSpan, type RelayTracer } from '@app/tracing';

function reasonOf(error: unknown): string {
  if (error instanceof RelayError) return error.reason;
  if (isRelayErrorBody(error)) return error.reason;
  return 'internal_error';
}

/**
 * Carries the caller's request id from the NATS headers into the handler's log lines, and logs
 * one line per handled request (subject, duration, outcome) under that request id: at `debug`
 * when it succeeded (the edge's access line already records every call), at `info` when it failed.
 */
@Injectable()
export class RequestIdInterceptor implements NestInterceptor {
  /** `logger` is the service's own (a process may host several services in tests). */
  constructor(
    private readonly logger: Logger,
    private readonly metrics?: NatsHandlerMetrics,
    private readonly tracer?: RelayTracer,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const natsContext = context.switchToRpc().getContext<NatsContext | undefined>();
    const headers = natsContext?.getHeaders?.();
    const requestId = headers?.get(REQUEST_ID_HEADER) || undefined;
    const subject = natsContext?.getSubject?.() ?? 'unknown';
    const startedAt = performance.now();
    return new Observable((subscriber) =>
      runWithRequestId(requestId, () =>
        runInServerSpan(this.tracer, subject, headers, (span) => {
          const effectiveRequestId = currentRequestId();
          return next.handle().subscribe({
            next: (value) => subscriber.next(value),
            error: (error: unknown) => {
              span?.end(error);
              this.metrics?.handled(subject, 'error', startedAt);
              const durationMs = Math.round((performance.now() - startedAt) * 10) / 10;
              this.logger.info(
                { request_id: effectiveRequestId, subject, duration_ms: durationMs, outcome: 'error', reason: reasonOf(error) },
                'request failed',
              );
              subscriber.error(error);
            },
            complete: () => {
              span?.end();
              this.metrics?.handled(subject, 'ok', startedAt);
              if (this.logger.isLevelEnabled('debug')) {
                const durationMs = Math.round((performance.now() - startedAt) * 10) / 10;
                this.logger.debug({ request_id: effectiveRequestId, subject, duration_ms: durationMs, outcome: 'ok' }, 'request handled');
              }
              subscriber.complete();
            },
          });
        }),
      ),
    );
  }
}
