import { Controller, Headers, HttpCode, Inject, Logger, Param, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { httpStatusOf, NOTIFIER_SUBJECTS, RelayError } from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import { PushFailureThrottle } from './push-failure-throttle';

/** The longest the receiver waits for the notifier (an upstream's push sender gives up after a few seconds). */
const PUSHED_TIMEOUT_MS = 3000;

/** The token of a push notification: `Authorization: Bearer <token>` as the relay asked, or the A2A token header. */
export function pushTokenOf(authorization: string | undefined, tokenHeader: string | undefined): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (bearer) return bearer[1];
  return tokenHeader && tokenHeader.trim() !== '' ? tokenHeader.trim() : null;
}

/**
 * The relay's receiver of push notifications from upstream agents' A2A servers
 * (docs/decisions/0025-upstream-agents-delivered-by-the-notifier.md): `POST /upstream-push/{task id}`
 * with the token the relay gave that task. No API key: the token is the authentication, checked by
 * the notifier, which then polls the task (the body is not trusted for what changed, `GetTask` is).
 * Callers that keep sending wrong tokens are refused 429 before the notifier is asked (PushFailureThrottle).
 */
@Controller('upstream-push')
export class UpstreamPushController {
  private readonly logger = new Logger(UpstreamPushController.name);

  constructor(
    @Inject(NatsRpcClient) private readonly rpc: NatsRpcClient,
    @Inject(PushFailureThrottle) private readonly throttle: PushFailureThrottle,
  ) {}

  @Post(':task_id')
  @HttpCode(200)
  async receive(
    @Param('task_id') taskId: string,
    @Headers('authorization') authorization: string | undefined,
    @Headers('x-a2a-notification-token') tokenHeader: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const token = pushTokenOf(authorization, tokenHeader);
    try {
      if (!token || token.length > 512 || taskId.length > 255) throw new RelayError('unauthenticated', 'Unknown task or wrong push notification token');
      await this.ask(request.ip, taskId, token);
      void reply.status(200).header('content-type', 'application/json; charset=utf-8').send({ accepted: true });
    } catch (error) {
      const relayError = error instanceof RelayError ? error : null;
      if (!relayError) this.logger.warn({ err: error, task_id: taskId }, 'could not take an upstream push notification');
      const reason = relayError?.reason ?? 'internal_error';
      const status = relayError ? httpStatusOf(relayError.reason) : 503;
      const retryAfter = relayError?.data?.retry_after_seconds;
      if (typeof retryAfter === 'number') void reply.header('retry-after', String(retryAfter));
      void reply
        .status(status)
        .header('content-type', 'application/json; charset=utf-8')
        .send({
          error: {
            reason,
            message: relayError?.message ?? 'The push notification could not be taken; send it again',
            ...(relayError?.reason === 'rate_limited' ? { data: relayError.data } : {}),
          },
        });
    }
  }

  /** Asks the notifier to take the push, through the throttle of wrong tokens. */
  private async ask(address: string, taskId: string, token: string): Promise<void> {
    this.throttle.admit(address, taskId, token);
    try {
      await this.rpc.request(NOTIFIER_SUBJECTS.upstreamPushed, { task_id: taskId, token }, PUSHED_TIMEOUT_MS);
    } catch (error) {
      this.throttle.recordFailure(address, taskId, token, error instanceof RelayError && error.reason === 'unauthenticated');
      throw error;
    }
    this.throttle.recordSuccess(address, taskId, token);
  }
}
