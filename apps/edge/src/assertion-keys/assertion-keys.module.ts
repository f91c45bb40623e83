import { Module } from '@nestjs/common';
import { AssertionKeysController } from './assertion-keys.controller';

/** The public key set of the relay's delivery assertions (`GET /.well-known/jwks.json`). */
@Module({ controllers: [AssertionKeysController] })
export class AssertionKeysModule {}
