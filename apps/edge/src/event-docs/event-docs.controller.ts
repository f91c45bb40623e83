import { Controller, Get, Headers, Inject, Param, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ASYNCAPI_PATH, EVENT_SCHEMAS_PATH, eventJsonSchema, eventSchemaFileName, eventSchemaUrl, RELAY_EVENT_KINDS } from '@app/contracts';
import { eventAsyncApiDocument } from '@app/messaging';
import { cardEtag } from '../cards/cards.controller';
import { EdgeConfig } from '../edge.config';

/** A served document: its body bytes and their ETag. */
interface ServedDocument {
  body: string;
  etag: string;
}

const DOCUMENT_CACHE_CONTROL = 'public, max-age=300';

function served(value: unknown): ServedDocument {
  const body = JSON.stringify(value);
  return { body, etag: cardEtag(body) };
}

/**
 * The event contract for consumer teams, public like the agent cards (docs/decisions/0024): the
 * AsyncAPI document of the relay's NATS events and the JSON Schema of each event type and version,
 * the `dataschema` of every event. Made from the code's one description with this edge's
 * RELAY_PUBLIC_URL and subject prefix.
 */
@Controller()
export class EventDocsController {
  private readonly cache = new Map<string, ServedDocument>();

  constructor(@Inject(EdgeConfig) private readonly config: EdgeConfig) {}

  @Get(ASYNCAPI_PATH.slice(1))
  asyncApi(@Headers('if-none-match') ifNoneMatch: string | undefined, @Res() reply: FastifyReply): void {
    const document = this.document('asyncapi', () =>
      eventAsyncApiDocument({ publicUrl: this.config.RELAY_PUBLIC_URL, subjectPrefix: this.config.NATS_SUBJECT_PREFIX }),
    );
    this.send(reply, document, 'application/json; charset=utf-8', ifNoneMatch);
  }

  @Get(`${EVENT_SCHEMAS_PATH.slice(1)}/:file`)
  schema(@Param('file') file: string, @Headers('if-none-match') ifNoneMatch: string | undefined, @Res() reply: FastifyReply): void {
    const kind = RELAY_EVENT_KINDS.find((candidate) => eventSchemaFileName(candidate) === file);
    if (!kind) {
      void reply
        .status(404)
        .header('cache-control', 'no-store')
        .send({ error: { reason: 'not_found', message: `No event schema ${file}` } });
      return;
    }
    const document = this.document(`schema:${file}`, () => eventJsonSchema(kind, eventSchemaUrl(this.config.RELAY_PUBLIC_URL, kind)));
    this.send(reply, document, 'application/schema+json; charset=utf-8', ifNoneMatch);
  }

  private document(key: string, build: () => unknown): ServedDocument {
    // RELAY_PUBLIC_URL is part of every document (the schemas' $id, the CloudEvents source).
    const cacheKey = `${this.config.RELAY_PUBLIC_URL}\n${key}`;
    let document = this.cache.get(cacheKey);
    if (!document) {
      document = served(build());
      this.cache.set(cacheKey, document);
    }
    return document;
  }

  private send(reply: FastifyReply, document: ServedDocument, contentType: string, ifNoneMatch: string | undefined): void {
    void reply.header('access-control-allow-origin', '*').header('cache-control', DOCUMENT_CACHE_CONTROL).header('etag', document.etag);
    if (ifNoneMatch?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === document.etag)) {
      void reply.status(304).send();
      return;
    }
    void reply.header('content-type', contentType).send(document.body);
  }
}
