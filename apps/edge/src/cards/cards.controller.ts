import { Controller, Get, Headers, Inject, Param, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { httpStatusOf, isValidHandle, normalizeHandle, RelayError } from '@app/contracts';
import { AgentCardService, type DatedCard } from './cards.service';

export const CARD_CACHE_CONTROL = 'public, max-age=300';

/** A strong ETag over the exact body bytes. */
export function cardEtag(body: string): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
}

/** `A2A-Version: 1.0` (a patch part such as `1.0.2` is ignored) asks for the v1.0 AgentCard. */
export function wantsV1Card(version: string | undefined): boolean {
  return typeof version === 'string' && /^1\.0(\.\d+)?$/.test(version.trim());
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim().replace(/^W\//, '');
    return tag === '*' || tag === etag;
  });
}

/** True when the card has not changed since the `If-Modified-Since` date (HTTP dates have whole seconds). */
function unmodifiedSince(header: string | undefined, lastModified: Date | undefined): boolean {
  if (!header || !lastModified) return false;
  const since = Date.parse(header);
  return !Number.isNaN(since) && Math.floor(lastModified.getTime() / 1000) <= Math.floor(since / 1000);
}

/** Public agent cards (no auth): the relay's compact shape and A2A v1.0 AgentCards, with ETag, Last-Modified and Cache-Control (docs/dialects.md#agent-cards). */
@Controller()
export class CardsController {
  constructor(@Inject(AgentCardService) private readonly cards: AgentCardService) {}

  @Get('.well-known/agent-card.json')
  async wellKnown(
    @Query('id') id: string | undefined,
    @Headers('a2a-version') version: string | undefined,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.serve(request, reply, async () => {
      if (id === undefined || id === '') return { card: await this.cards.relayCardV1() };
      const handle = this.handle(id);
      return wantsV1Card(version) ? this.cards.datedAgentCardV1(handle) : this.cards.datedRelayAgentCard(handle);
    });
  }

  @Get('a2a/:handle/.well-known/agent-card.json')
  async agentCard(@Param('handle') handle: string, @Req() request: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.serve(request, reply, () => this.cards.datedAgentCardV1(this.handle(handle)));
  }

  private handle(raw: string): string {
    const handle = normalizeHandle(raw);
    if (!isValidHandle(handle)) throw new RelayError('agent_not_found', `No agent with the handle ${raw}`);
    return handle;
  }

  private async serve(request: FastifyRequest, reply: FastifyReply, build: () => Promise<DatedCard<object>> | DatedCard<object>): Promise<void> {
    // Cards are public discovery documents: any origin may read them.
    reply.header('vary', 'A2A-Version').header('access-control-allow-origin', '*');
    let card: object;
    let updatedAt: string | undefined;
    try {
      ({ card, updatedAt } = await build());
    } catch (error) {
      if (error instanceof RelayError && error.reason === 'agent_not_found') {
        void reply
          .status(404)
          .header('cache-control', 'no-store')
          .send({ error: { reason: 'agent_not_found', message: error.message } });
        return;
      }
      if (error instanceof RelayError) {
        void reply
          .status(httpStatusOf(error.reason) === 200 ? 500 : httpStatusOf(error.reason))
          .header('cache-control', 'no-store')
          .send({ error: { reason: error.reason, message: error.message } });
        return;
      }
      throw error;
    }
    const body = JSON.stringify(card);
    const etag = cardEtag(body);
    reply.header('etag', etag).header('cache-control', CARD_CACHE_CONTROL);
    const lastModified = updatedAt !== undefined ? new Date(updatedAt) : undefined;
    if (lastModified) reply.header('last-modified', lastModified.toUTCString());
    const ifNoneMatch = request.headers['if-none-match'];
    // If-None-Match, when sent, decides alone (RFC 9110 §13.2.2).
    const notModified = ifNoneMatch ? etagMatches(ifNoneMatch, etag) : unmodifiedSince(request.headers['if-modified-since'], lastModified);
    if (notModified) {
      void reply.status(304).send();
      return;
    }
    void reply.status(200).header('content-type', 'application/json; charset=utf-8').send(body);
  }
}
