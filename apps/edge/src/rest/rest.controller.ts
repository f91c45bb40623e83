import { Controller, Delete, Get, Param, Post, Query, Req, Res, Inject } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { objectBody, optionalObjectBody, queryParams, taskTarget } from '@app/a2a';
import { RelayError } from '@app/contracts';
import { sendRestError } from './rest-errors';
import { RestEndpoint, type RestOperation } from './rest.endpoint';

type Query = Record<string, unknown>;

function notFound(method: string, path: string): RelayError {
  return new RelayError('method_not_found', `No HTTP+JSON operation ${method} ${path}`, { method: `${method} ${path}` });
}

/**
 * The A2A v1.0 HTTP+JSON routes of each agent endpoint `/a2a/{handle}` (beside its JSON-RPC
 * `POST /a2a/{handle}`). A route only says which A2A method it is and where its params are; the
 * rest is RestEndpoint's.
 */
@Controller('a2a/:handle')
export class RestController {
  constructor(@Inject(RestEndpoint) private readonly endpoint: RestEndpoint) {}

  /** `POST /message:send` and `POST /message:stream` (one path segment holding a colon). */
  @Post(':action')
  message(@Param('handle') handle: string, @Param('action') action: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const canonical = action === 'message:send' ? 'send' : action === 'message:stream' ? 'stream' : undefined;
    if (!canonical) return this.refuse(reply, notFound('POST', `/${action}`));
    return this.answer(request, reply, handle, { canonical, route: `POST /${action}`, params: objectBody });
  }

  @Get('tasks')
  list(@Param('handle') handle: string, @Query() query: Query, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.answer(request, reply, handle, { canonical: 'list', route: 'GET /tasks', params: () => queryParams(query) });
  }

  /** `GET /tasks/{id}` (GetTask) and `GET /tasks/{id}:subscribe` (the proto's verb for SubscribeToTask). */
  @Get('tasks/:target')
  task(
    @Param('handle') handle: string,
    @Param('target') target: string,
    @Query() query: Query,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { id, verb } = taskTarget(target);
    if (verb === 'subscribe')
      return this.answer(request, reply, handle, { canonical: 'resubscribe', route: 'GET /tasks/{id}:subscribe', params: () => ({ id }) });
    if (verb !== undefined) return this.refuse(reply, notFound('GET', `/tasks/{id}:${verb}`));
    return this.answer(request, reply, handle, { canonical: 'get', route: 'GET /tasks/{id}', params: () => ({ ...queryParams(query), id }) });
  }

  /** `POST /tasks/{id}:cancel` and `POST /tasks/{id}:subscribe`. */
  @Post('tasks/:target')
  taskAction(@Param('handle') handle: string, @Param('target') target: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { id, verb } = taskTarget(target);
    if (verb === 'cancel') {
      return this.answer(request, reply, handle, {
        canonical: 'cancel',
        route: 'POST /tasks/{id}:cancel',
        params: (body) => ({ ...optionalObjectBody(body), id }),
      });
    }
    if (verb === 'subscribe')
      return this.answer(request, reply, handle, { canonical: 'resubscribe', route: 'POST /tasks/{id}:subscribe', params: () => ({ id }) });
    return this.refuse(reply, notFound('POST', `/tasks/{id}${verb !== undefined ? `:${verb}` : ''}`));
  }

  @Post('tasks/:taskId/pushNotificationConfigs')
  createPushConfig(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.answer(request, reply, handle, {
      canonical: 'push_config_set',
      route: 'POST /tasks/{id}/pushNotificationConfigs',
      params: (body) => ({ ...objectBody(body), taskId }),
    });
  }

  @Get('tasks/:taskId/pushNotificationConfigs')
  listPushConfigs(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Query() query: Query,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.answer(request, reply, handle, {
      canonical: 'push_config_list',
      route: 'GET /tasks/{id}/pushNotificationConfigs',
      params: () => ({ ...queryParams(query), taskId }),
    });
  }

  @Get('tasks/:taskId/pushNotificationConfigs/:configId')
  getPushConfig(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Param('configId') configId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.answer(request, reply, handle, {
      canonical: 'push_config_get',
      route: 'GET /tasks/{id}/pushNotificationConfigs/{configId}',
      params: () => ({ taskId, id: configId }),
    });
  }

  @Delete('tasks/:taskId/pushNotificationConfigs/:configId')
  deletePushConfig(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Param('configId') configId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.answer(request, reply, handle, {
      canonical: 'push_config_delete',
      route: 'DELETE /tasks/{id}/pushNotificationConfigs/{configId}',
      params: () => ({ taskId, id: configId }),
    });
  }

  @Get('extendedAgentCard')
  extendedCard(@Param('handle') handle: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.answer(request, reply, handle, { canonical: 'extended_card', route: 'GET /extendedAgentCard', params: () => ({}) });
  }

  private answer(request: FastifyRequest, reply: FastifyReply, handle: string, operation: RestOperation): Promise<void> {
    return this.endpoint.answer(request, reply, handle.toLowerCase(), operation);
  }

  private async refuse(reply: FastifyReply, error: RelayError): Promise<void> {
    sendRestError(reply, error);
  }
}
