import { Inject, Injectable, Logger } from '@nestjs/common';
import { RelayError, UPSTREAM_LIMITS, type ResolveUpstreamReply, type ResolveUpstreamRequest } from '@app/contracts';
import { NotifierConfig } from '../notifier.config';
import { checkWebhookUrl, SsrfRefusedError } from '../deliveries/ssrf-guard';
import { AgentCardError, parseAgentCard } from './agent-card';
import { fetchJson, guardedFetch } from './guarded-fetch';
import { OAuth2TokenError } from './oauth2-token';
import { UpstreamCredentialsService } from './upstream-credentials.service';

/** The longest the relay waits for an agent card (below the admin API's NATS request timeout). */
const CARD_TIMEOUT_MS = 4000;

function cardProblem(message: string): RelayError {
  return new RelayError('invalid_params', `upstream.card_url: ${message}`, {
    field: 'upstream.card_url',
    fields: [{ field: 'upstream.card_url', messages: [message] }],
  });
}

/**
 * Connects an existing A2A agent: reads its card from the URL an admin gave (through the SSRF
 * guard, at most 256 KiB, v0.3 or v1.0 shape), picks the interface the relay will deliver to,
 * checks that interface's URL against the guard too, and keeps the credential for it sealed.
 */
@Injectable()
export class UpstreamResolverService {
  private readonly logger = new Logger(UpstreamResolverService.name);
  private readonly fetch: typeof fetch;

  constructor(
    @Inject(NotifierConfig) private readonly config: NotifierConfig,
    @Inject(UpstreamCredentialsService) private readonly credentials: UpstreamCredentialsService,
  ) {
    this.fetch = guardedFetch({
      allowPrivate: config.RELAY_WEBHOOK_ALLOW_PRIVATE,
      userAgent: 'AgentRelay-Notifier/1',
      timeoutMs: Math.min(CARD_TIMEOUT_MS, config.RELAY_WEBHOOK_TIMEOUT_MS),
    });
  }

  async resolve(request: ResolveUpstreamRequest): Promise<ResolveUpstreamReply> {
    const startedAt = Date.now();
    const allowPrivate = this.config.RELAY_WEBHOOK_ALLOW_PRIVATE;
    let document: unknown;
    try {
      checkWebhookUrl(request.card_url, allowPrivate);
      document = await fetchJson(request.card_url, UPSTREAM_LIMITS.cardBytes, this.fetch);
    } catch (error) {
      const reason = error instanceof SsrfRefusedError ? `refused: ${error.message}` : (error as Error).message;
      throw cardProblem(`the agent card could not be read (${reason})`);
    }
    let card;
    try {
      card = parseAgentCard(document);
    } catch (error) {
      if (error instanceof AgentCardError) throw cardProblem(error.message);
      throw error;
    }
    try {
      checkWebhookUrl(card.url, allowPrivate);
    } catch (error) {
      throw cardProblem(`the card's ${card.binding} interface ${card.url} is refused: ${(error as Error).message}`);
    }
    let auth;
    try {
      auth = await this.credentials.put(request.handle, request.auth, card, Math.max(500, CARD_TIMEOUT_MS - (Date.now() - startedAt)));
    } catch (error) {
      if (!(error instanceof OAuth2TokenError)) throw error;
      throw new RelayError('invalid_params', `${error.field}: ${error.message}`, {
        field: error.field,
        fields: [{ field: error.field, messages: [error.message] }],
      });
    }
    this.logger.log(
      { handle: request.handle, url: card.url, binding: card.binding, protocol_version: card.protocol_version, auth: auth.scheme },
      'upstream agent card read',
    );
    return {
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
