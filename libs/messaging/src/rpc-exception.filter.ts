import { Catch, Logger, type ArgumentsHost, type RpcExceptionFilter } from '@nestjs/common';
import { RpcException } from '@nestjs/microservices';
import { randomUUID } from 'node:crypto';
import { throwError, type Observable } from 'rxjs';
import { isRelayErrorBody, RelayError, type RelayErrorBody } from '@app/contracts';

/**
 * Turns every error a handler throws into a RelayErrorBody the edge can map. Unknown errors are
 * logged with an id and answered as `internal_error` carrying only that id.
 */
@Catch()
export class RelayRpcExceptionFilter implements RpcExceptionFilter<unknown> {
  private readonly logger = new Logger(RelayRpcExceptionFilter.name);

  catch(exception: unknown, _host: ArgumentsHost): Observable<RelayErrorBody> {
    return throwError(() => this.toBody(exception));
  }

  private toBody(exception: unknown): RelayErrorBody {
    if (exception instanceof RelayError) return exception.toBody();
    if (exception instanceof RpcException) {
      const error = exception.getError();
      if (isRelayErrorBody(error)) return error;
    }
    const errorId = randomUUID();
    this.logger.error({ err: exception, error_id: errorId }, 'unhandled error in message handler');
    return { reason: 'internal_error', message: `Internal error (id ${errorId})`, data: { error_id: errorId } };
  }
}
