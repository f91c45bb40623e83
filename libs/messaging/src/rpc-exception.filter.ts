import { Catch, Logger, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { throwError, type Observable } from 'rxjs';
import { isRelayErrorBody, RelayError, type RelayErrorBody } from '@app/contracts';
import { isDatabaseUnavailable, isStatementCancelled, refusedValue } from './database-unavailable';

/** How long a client is asked to wait before retrying a call that found the database unavailable. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * Turns every error a handler throws into a RelayErrorBody the edge can map. A database that
 * cannot be reached is `service_unavailable` naming it, with a retry delay; other unknown errors
 * are logged with an id and answered as `internal_error` carrying only that id. A value the
 * schema's constraints refuse is `invalid_params` naming the constraint: the services trust the
 * values they are sent (validated where they entered), and the schema is the last line.
 */
@Catch()
export class RelayRpcExceptionFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger(RelayRpcExceptionFilter.name);

  /** @param service the service whose handlers this filter answers for, named in its errors. */
  constructor(private readonly service = 'relay') {}

  catch(exception: unknown, _host: ArgumentsHost): Observable<RelayErrorBody> {
    return throwError(() => this.toBody(exception));
  }

  private toBody(exception: unknown): RelayErrorBody {
    if (exception instanceof RelayError) return exception.toBody();
    if (exception instanceof RpcException) {
      const error = exception.getError();
      if (isRelayErrorBody(error)) return error;
    }
    if (isDatabaseUnavailable(exception)) {
      this.logger.warn({ err: exception }, 'database unavailable');
      return {
        reason: 'service_unavailable',
        message: `The ${this.service} service cannot reach its database (Postgres); retry after ${DATABASE_RETRY_AFTER_SECONDS} s with the same idempotency key or messageId`,
        data: { service: this.service, dependency: 'database', retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS },
      };
    }
    if (isStatementCancelled(exception)) {
      this.logger.warn({ err: exception }, 'database statement cancelled (statement timeout)');
      return {
        reason: 'service_unavailable',
        message: `The ${this.service} service's database did not finish the request in time, so nothing was changed; retry after ${DATABASE_RETRY_AFTER_SECONDS} s with the same idempotency key or messageId`,
        data: { service: this.service, dependency: 'database', retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS },
      };
    }
    const refused = refusedValue(exception);
    if (refused) {
      const rule = refused.constraint ?? refused.column ?? 'a column type';
      this.logger.warn({ err: exception, ...refused }, 'a value the database refuses reached the service');
      return {
        reason: 'invalid_params',
        message: `A value breaks the ${this.service} service's stored rule ${rule}; nothing was changed`,
        data: { ...refused },
      };
    }
    const errorId = randomUUID();
    this.logger.error({ err: exception, error_id: errorId }, 'unhandled error in message handler');
    return { reason: 'internal_error', message: `Internal error (id ${errorId})`, data: { error_id: errorId } };
  }
}
