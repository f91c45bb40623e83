import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { NOTIFIER_SUBJECTS, RelayError } from '@app/contracts';
import { natsInboxPrefix, NatsRpcClient } from '@app/messaging';
import { generateWebhookSecret, NotifierSealer } from '@app/secrets';
import { DirectoryConfig } from '../directory.config';

/**
 * Makes a new agent's first webhook signing secret and has the notifier (which signs with it) store
 * it. It is called inside the registration transaction: the agent commits only once the notifier
 * stored it, so a registration either shows the secret that signs the agent's webhooks or fails with
 * nothing created.
 */
@Injectable()
export class WebhookSecretProvisioner implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(WebhookSecretProvisioner.name);
  private client?: NatsRpcClient;

  private readonly sealer: NotifierSealer;

  constructor(@Inject(DirectoryConfig) private readonly config: DirectoryConfig) {
    this.sealer = new NotifierSealer(config.RELAY_NOTIFIER_PUBLIC_KEY);
  }

  async onModuleInit(): Promise<void> {
    this.client = await NatsRpcClient.connect({
      url: this.config.natsServers,
      inboxPrefix: natsInboxPrefix('directory', this.config.NATS_SUBJECT_PREFIX),
      subjectPrefix: this.config.NATS_SUBJECT_PREFIX,
      // Well inside the edge's own timeout for the whole registration.
      defaultTimeoutMs: Math.max(100, Math.floor(this.config.NATS_REQUEST_TIMEOUT_MS * 0.4)),
      name: 'agentrelay-directory-rpc',
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client?.drain().catch(() => undefined);
  }

  /** The new agent's first secret; an upstream agent's registration (the notifier's id for it) is committed with it. */
  async provision(handle: string, upstreamRegistration?: string): Promise<string> {
    const client = this.client;
    if (!client) throw new RelayError('service_unavailable', 'The directory is not connected to NATS', { service: 'notifier' });
    // A request the notifier only reaches after we gave up (it was stalled) is refused there.
    const notAfter = new Date(Date.now() + client.defaultTimeoutMs).toISOString();
    const secret = generateWebhookSecret();
    try {
      // Sealed to the notifier's key: no other NATS user reads the secret on its way.
      const request = {
        handle,
        not_after: notAfter,
        sealed_webhook_secret: await this.sealer.seal(secret),
        ...(upstreamRegistration !== undefined ? { upstream_registration: upstreamRegistration } : {}),
      };
      await client.request(NOTIFIER_SUBJECTS.provisionWebhookSecret, request);
      return secret;
    } catch (error) {
      this.logger.warn({ err: error, handle }, 'registration refused: the notifier did not provide a webhook secret');
      throw new RelayError(
        'service_unavailable',
        `The notifier did not provide a webhook signing secret, so ${handle} was not registered (nothing was created); retry`,
        { service: 'notifier' },
      );
    }
  }
}
