import { RetentionServiceConfig } from '@app/config';
import { IsNotifierPublicKey } from '@app/secrets';

export class DirectoryConfig extends RetentionServiceConfig {
  override METRICS_PORT = 9465;

  /** The notifier's public key (`id:base64url` X25519) that a new agent's webhook secret is sealed to on its way to the notifier over NATS. */
  @IsNotifierPublicKey()
  RELAY_NOTIFIER_PUBLIC_KEY: string;
}
