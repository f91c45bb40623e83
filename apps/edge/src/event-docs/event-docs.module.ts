import { Module } from '@nestjs/common';
import { EventDocsController } from './event-docs.controller';

/** The event contract documents (AsyncAPI, JSON Schemas), served publicly. */
@Module({ controllers: [EventDocsController] })
export class EventDocsModule {}
