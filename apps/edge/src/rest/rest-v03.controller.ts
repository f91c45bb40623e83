import { Controller, Delete, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  objectBody,
  optionalObjectBody,
  protoPushConfigToParams,
  protoSendToParams,
  pushConfigToProto,
  queryParams,
  streamResponseToProto,
  taskTarget,
  taskToProto,
  type CanonicalMethod,
  type Json,
} from '@app/a2a';
import { RelayError } from '@app/contracts';
import type { AgentCardV1 } from '../cards/agent-card';
import { agentCardV03 } from '../jsonrpc/a2a/extended-card';
import { sendLegacyRestError } from './rest-errors';
import { RestEndpoint, type RestOperation } from './rest.endpoint';

type Query = Record<string, unknown>;

const asIs = (result: Json): unknown => result;

function notFound(method: string, path: string): RelayError {
  return new RelayError('method_not_found', `No HTTP+JSON operation ${method} /v1${path}`, { method: `${method} /v1${path}` });
}

/**
 * The A2A v0.3 HTTP+JSON routes of each agent endpoint, under `/a2a/{handle}/v1/…`, as the v0.3
 * proto's HTTP annotations spell them (there is no ListTasks in v0.3). Same A2A methods as every
 * other binding; the v1.0 renderings are translated to the v0.3 proto shapes (libs/a2a/src/rest-v03.ts).
 */
@Controller('a2a/:handle/v1')
export class RestV03Controller {
  constructor(@Inject(RestEndpoint) private readonly endpoint: RestEndpoint) {}

  @Post(':action')
  message(@Param('handle') handle: string, @Param('action') action: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const canonical = action === 'message:send' ? 'send' : action === 'message:stream' ? 'stream' : undefined;
    if (!canonical) return this.refuse(reply, notFound('POST', `/${action}`));
    return this.answer(request, reply, handle, canonical, `POST /v1/${action}`, (body) => protoSendToParams(objectBody(body)), streamResponseToProto);
  }

  @Get('tasks/:target')
  task(
    @Param('handle') handle: string,
    @Param('target') target: string,
    @Query() query: Query,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { id, verb } = taskTarget(target);
    if (verb === 'subscribe') return this.answer(request, reply, handle, 'resubscribe', 'GET /v1/tasks/{id}:subscribe', () => ({ id }), asIs);
    if (verb !== undefined) return this.refuse(reply, notFound('GET', `/tasks/{id}:${verb}`));
    return this.answer(request, reply, handle, 'get', 'GET /v1/tasks/{id}', () => ({ ...queryParams(query), id }), taskToProto);
  }

  @Post('tasks/:target')
  taskAction(@Param('handle') handle: string, @Param('target') target: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const { id, verb } = taskTarget(target);
    if (verb === 'cancel') {
      return this.answer(request, reply, handle, 'cancel', 'POST /v1/tasks/{id}:cancel', (body) => ({ ...optionalObjectBody(body), id }), taskToProto);
    }
    if (verb === 'subscribe') return this.answer(request, reply, handle, 'resubscribe', 'POST /v1/tasks/{id}:subscribe', () => ({ id }), asIs);
    return this.refuse(reply, notFound('POST', `/tasks/{id}${verb !== undefined ? `:${verb}` : ''}`));
  }

  @Post('tasks/:taskId/pushNotificationConfigs')
  createPushConfig(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.answer(
      request,
      reply,
      handle,
      'push_config_set',
      'POST /v1/tasks/{id}/pushNotificationConfigs',
      (body) => protoPushConfigToParams(objectBody(body), taskId),
      pushConfigToProto,
    );
  }

  @Get('tasks/:taskId/pushNotificationConfigs')
  listPushConfigs(@Param('handle') handle: string, @Param('taskId') taskId: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.answer(
      request,
      reply,
      handle,
      'push_config_list',
      'GET /v1/tasks/{id}/pushNotificationConfigs',
      () => ({ taskId }),
      (result) => ({
        configs: (result.configs as Json[]).map(pushConfigToProto),
        nextPageToken: '',
      }),
    );
  }

  @Get('tasks/:taskId/pushNotificationConfigs/:configId')
  getPushConfig(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Param('configId') configId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const route = 'GET /v1/tasks/{id}/pushNotificationConfigs/{configId}';
    return this.answer(request, reply, handle, 'push_config_get', route, () => ({ taskId, id: configId }), pushConfigToProto);
  }

  @Delete('tasks/:taskId/pushNotificationConfigs/:configId')
  deletePushConfig(
    @Param('handle') handle: string,
    @Param('taskId') taskId: string,
    @Param('configId') configId: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const route = 'DELETE /v1/tasks/{id}/pushNotificationConfigs/{configId}';
    return this.answer(request, reply, handle, 'push_config_delete', route, () => ({ taskId, id: configId }), asIs);
  }

  /** The authenticated extended card as a v0.3 proto AgentCard: the v0.3 fields, security in ProtoJSON oneof form. */
  @Get('card')
  card(@Param('handle') handle: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.answer(
      request,
      reply,
      handle,
      'extended_card',
      'GET /v1/card',
      () => ({}),
      (result) => {
        const card = result as unknown as AgentCardV1;
        return { ...agentCardV03(card), securitySchemes: card.securitySchemes, security: card.securityRequirements };
      },
    );
  }

  private answer(
    request: FastifyRequest,
    reply: FastifyReply,
    handle: string,
    canonical: CanonicalMethod,
    route: string,
    params: RestOperation['params'],
    render: (result: Json) => unknown,
  ): Promise<void> {
    return this.endpoint.answer(request, reply, handle.toLowerCase(), { canonical, route, params, legacy: { version: '1.0', render } });
  }

  private async refuse(reply: FastifyReply, error: RelayError): Promise<void> {
    sendLegacyRestError(reply, error);
  }
}
