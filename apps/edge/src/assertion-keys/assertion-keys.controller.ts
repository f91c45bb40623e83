import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DELIVERY_ASSERTION_JWKS_PATH } from '@app/contracts';
import { assertionJwks, parseAssertionPublicKeys } from '@app/secrets';
import { EdgeConfig } from '../edge.config';

/**
 * How long verifiers may keep the key set: a key is published at least this long before the
 * notifier signs with it (docs/operations.md#delivery-assertion-keys).
 */
export const JWKS_CACHE_CONTROL = 'public, max-age=300';

/**
 * The keys the relay signs its delivery assertions with (docs/chains.md#who-asked-signed), public
 * and without authentication: every key of RELAY_ASSERTION_PUBLIC_KEYS as a JWKS.
 */
@Controller()
export class AssertionKeysController {
  private readonly body: string;

  constructor(@Inject(EdgeConfig) config: EdgeConfig) {
    this.body = JSON.stringify(assertionJwks(parseAssertionPublicKeys(config.RELAY_ASSERTION_PUBLIC_KEYS)));
  }

  @Get(DELIVERY_ASSERTION_JWKS_PATH.slice(1))
  jwks(@Res() reply: FastifyReply): void {
    void reply
      .status(200)
      .header('content-type', 'application/jwk-set+json')
      .header('cache-control', JWKS_CACHE_CONTROL)
      .header('access-control-allow-origin', '*')
      .send(this.body);
  }
}
