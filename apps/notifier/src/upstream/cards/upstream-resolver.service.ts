import { Inject, Injectable, Logger } from '@nestjs/common';
import { RelayError, type ResolveUpstreamReply, type UpstreamRegistrationFields } from '@app/contracts';
import type { ParsedAgentCard } from './agent-card';
import { snapshotOf } from './card-diff';
import { OAuth2TokenError } from '../identity/oauth2-token';
import { CARD_TIMEOUT_MS, CardReadError, UpstreamCardsService } from './upstream-cards.service';
import { UpstreamCredentialsService } from '../identity/upstream-credentials.service';
import { UpstreamRegistrationsService } from './upstream-registrations.service';
import { checkedTls, UpstreamTlsService } from '../identity/upstream-tls.service';

function cardProblem(message: string): RelayError {
  return new RelayError('invalid_params', `upstream.card_url: ${message}`, {
    field: 'upstream.card_url',
    fields: [{ field: 'upstream.card_url', messages: [message] }],
  });
}

/**
 * Connects an existing A2A agent: reads its card from the URL an admin gave (through the SSRF
 * guard, at most 256 KiB, v0.3 or v1.0 shape, with the mTLS client certificate when given), picks
 * the interface the relay will deliver to, checks that interface's URL against the guard too, and
 * keeps the credential and client key for it sealed and the card as the accepted one.
 */
@Injectable()
export class UpstreamResolverService {
  private readonly logger = new Logger(UpstreamResolverService.name);

  constructor(
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
    @Inject(UpstreamCardsService) private readonly cards: UpstreamCardsService,
    @Inject(UpstreamTlsService) private readonly tls: UpstreamTlsService,
    @Inject(UpstreamRegistrationsService) private readonly registrations: UpstreamRegistrationsService,
  ) {}

  /** A registration's fields, the credentials opened from what the edge sealed. */
  async resolve(request: UpstreamRegistrationFields & { handle: string }): Promise<ResolveUpstreamReply> {
    const startedAt = Date.now();
    const tls = request.tls ? checkedTls(request.tls).tls : null;
    let card: ParsedAgentCard;
    try {
      card = await this.cards.readCard(request.handle, request.card_url, tls);
    } catch (error) {
      if (error instanceof CardReadError) throw cardProblem(error.message);
      throw error;
    }
    let auth;
    try {
      auth = await this.credentials.prepare(request.handle, request.auth, card, Math.max(500, CARD_TIMEOUT_MS - (Date.now() - startedAt)));
    } catch (error) {
      if (!(error instanceof OAuth2TokenError)) throw error;
      throw new RelayError('invalid_params', `${error.field}: ${error.message}`, {
        field: error.field,
        fields: [{ field: error.field, messages: [error.message] }],
      });
    }
    // Nothing of the agent holding this handle (if one does) changes here: the directory commits the registration once it holds the handle.
    const registration = await this.registrations.keep(request.handle, {
      credential: auth.sealed,
      tls: request.tls ? this.tls.sealed(request.tls) : null,
      accepted: snapshotOf(card),
    });
    this.logger.log(
      { handle: request.handle, url: card.url, binding: card.binding, protocol_version: card.protocol_version, auth: auth.scheme, mtls: tls !== null },
      'upstream agent card read',
    );
    return {
      registration,
      upstream: {
        card_url: request.card_url,
        url: card.url,
        binding: card.binding,
        protocol_version: card.protocol_version,
        streaming: card.streaming,
        push_notifications: card.push_notifications,
        auth_scheme: auth.scheme,
        auth_header: auth.header,
        card_fetched_at: new Date().toISOString(),
      },
      card: { name: card.name, description: card.description, skills: card.skills },
    };
  }
}
