import { All, Controller, Inject, Param, Req, Res } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { agentBinding } from '../endpoint/http-intake';
import { RestEndpoint } from './rest.endpoint';

/**
 * The HTTP+JSON routes of each agent endpoint `/a2a/{handle}/…` (beside its JSON-RPC
 * `POST /a2a/{handle}` and its card): v1.0, and v0.3 under `/v1/…`. Which operation a request is
 * comes from the one route table (rest-routes.ts); the rest is RestEndpoint's.
 */
@Controller('a2a/:handle')
export class RestController {
  constructor(@Inject(RestEndpoint) private readonly endpoint: RestEndpoint) {}

  @All('*')
  @RouteConfig(agentBinding('http-json'))
  route(@Param('handle') handle: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    return this.endpoint.answer(request, reply, handle.toLowerCase());
  }
}
