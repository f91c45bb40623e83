import type { ConnectionOptions } from '@nats-io/transport-node';
import { parseNatsServers, type NatsServers } from '@app/config';

/** What nats.js needs to reach a NATS_URL: every server listed, and the credentials they carried. */
export function natsConnectOptions(natsUrl: string | NatsServers): Pick<ConnectionOptions, 'servers' | 'user' | 'pass' | 'token'> {
  const { servers, user, pass, token } = typeof natsUrl === 'string' ? parseNatsServers(natsUrl) : natsUrl;
  return { servers, user, pass, token };
}
