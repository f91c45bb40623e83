import { Controller, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { agentBinding } from '../endpoint/http-intake';
import { JsonRpcEndpoint } from './json-rpc.endpoint';

/** `POST /a2a` (the relay endpoint) and `POST /a2a/{handle}` (one agent's A2A endpoint). */
@Controller('a2a')
export class JsonRpcController {
  constructor(@Inject(JsonRpcEndpoint) private readonly endpoint: JsonRpcEndpoint) {}

  @Post()
  @RouteConfig(agentBinding('json-rpc'))
  relay(@Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.endpoint.answer(request, reply, null);
  }

  @Post(':handle')
  @RouteConfig(agentBinding('json-rpc'))
  agent(@Param('handle') handle: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.endpoint.answer(request, reply, handle.toLowerCase());
  }
}
