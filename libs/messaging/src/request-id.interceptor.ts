import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { NatsContext } from '@nestjs/microservices';
import { Observable } from 'rxjs';
import { REQUEST_ID_HEADER, runWithRequestId } from '@app/logging';

/** Carries the caller's request id from the NATS headers into the handler's log lines. */
@Injectable()
export class RequestIdInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const natsContext = context.switchToRpc().getContext<NatsContext | undefined>();
    const requestId = natsContext?.getHeaders?.()?.get(REQUEST_ID_HEADER) || undefined;
    return new Observable((subscriber) => runWithRequestId(requestId, () => next.handle().subscribe(subscriber)));
  }
}
