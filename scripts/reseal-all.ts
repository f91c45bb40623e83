import { DataSource } from 'typeorm';
import { resealColumns, SecretCipher, type ResealResult } from '@app/secrets';
import { ORG_APPROVAL_CHANNEL_SEALED_COLUMNS } from '../apps/notifier/src/approvals/org-approval-channels.service';
import { DELIVERY_SEALED_COLUMNS } from '../apps/notifier/src/deliveries/deliveries.service';
import { WEBHOOK_SECRET_SEALED_COLUMNS } from '../apps/notifier/src/secrets/webhook-secrets.service';
import { PUSH_TARGET_SEALED_COLUMNS } from '../apps/notifier/src/targets/push-targets.service';
import { UPSTREAM_CREDENTIAL_SEALED_COLUMNS } from '../apps/notifier/src/upstream/identity/upstream-credentials.service';
import { UPSTREAM_REGISTRATION_SEALED_COLUMNS } from '../apps/notifier/src/upstream/cards/upstream-registrations.service';
import { UPSTREAM_TLS_SEALED_COLUMNS } from '../apps/notifier/src/upstream/identity/upstream-tls.service';
import { PUSH_CONFIG_SEALED_COLUMNS } from '../apps/tasks/src/push-configs/push-configs.service';

/**
 * Seals every stored secret of the tasks and notifier schemas with the first key of `secretKeys`
 * (values in clear or sealed with another listed key), without restarting the services.
 */
export async function resealAllSecrets(databaseUrl: string, secretKeys: string): Promise<ResealResult[]> {
  const cipher = SecretCipher.fromConfig(secretKeys);
  const dataSource = await new DataSource({ type: 'postgres', url: databaseUrl }).initialize();
  try {
    return await resealColumns(dataSource, cipher, [
      ...PUSH_CONFIG_SEALED_COLUMNS,
      ...WEBHOOK_SECRET_SEALED_COLUMNS,
      ...PUSH_TARGET_SEALED_COLUMNS,
      ...DELIVERY_SEALED_COLUMNS,
      ...UPSTREAM_CREDENTIAL_SEALED_COLUMNS,
      ...UPSTREAM_TLS_SEALED_COLUMNS,
      ...UPSTREAM_REGISTRATION_SEALED_COLUMNS,
      ...ORG_APPROVAL_CHANNEL_SEALED_COLUMNS,
    ]);
  } finally {
    await dataSource.destroy();
  }
}
