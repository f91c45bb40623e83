import { Transform } from 'class-transformer';
import { IsIn } from 'class-validator';
import { RetentionServiceConfig, toBoolean } from '@app/config';
import { IsNotifierPublicKey } from '@app/secrets';

export class DirectoryConfig extends RetentionServiceConfig {
  override METRICS_PORT = 9465;

  /** The notifier's public key (`id:base64url` X25519) that a new agent's webhook secret is sealed to on its way to the notifier over NATS. */
  @IsNotifierPublicKey()
  RELAY_NOTIFIER_PUBLIC_KEY: string;

  /** Whether agents are registered only in orgs an admin created (true), or an org is made on first use with the relay's defaults (false). */
  @Transform(toBoolean)
  @IsIn([true, false], { message: 'RELAY_ORGS_EXPLICIT must be true or false' })
  RELAY_ORGS_EXPLICIT: boolean = false;
}
