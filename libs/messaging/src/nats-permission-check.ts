import { connect, errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { NatsServers } from '@app/config';
import { natsConnectOptions } from './nats-connection';
import type { NatsGrant, NatsPermissions } from './nats-permissions';

/**
 * The header a start-up permission probe carries: services and edges drop such a message unread,
 * and JetStream refuses to store it (its `Nats-Expected-Stream` names no stream).
 */
export const PERMISSION_PROBE_HEADER = 'Relay-Permission-Probe';
const PROBE_STREAM = 'agentrelay-permission-probe';
const PROBE_TOKEN = 'agentrelay_permission_probe';
/** Not JSON, so a JetStream API request among the probes is refused as malformed and changes nothing. */
const PROBE_BODY = 'agentrelay permission probe';

/** A process's NATS credential lacks a grant of the permission table (or was refused): it does not start. */
export class NatsPermissionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NatsPermissionError';
  }
}

/** A subject inside a grant's pattern: each wildcard token replaced by a probe token. */
export function probeSubject(pattern: string): string {
  return pattern
    .split('.')
    .map((token) => (token === '*' || token === '>' ? PROBE_TOKEN : token))
    .join('.');
}

function holderMessage(permissions: NatsPermissions, operation: 'publish' | 'subscribe', grant: NatsGrant): string {
  return (
    `NATS denies the ${permissions.holder} permission to ${operation} "${grant.subject}" (it ${grant.why}); ` +
    'give its credential every grant of the relay permission table (npm run nats:credentials, docs/nats-security.md)'
  );
}

async function connectAs(servers: NatsServers | string, permissions: NatsPermissions): Promise<NatsConnection> {
  try {
    return await connect({
      ...natsConnectOptions(servers, permissions.inboxPrefix),
      name: `agentrelay-${permissions.holder}-permission-check`,
      maxReconnectAttempts: 0,
    });
  } catch (error) {
    if (error instanceof errors.AuthorizationError || /authoriz/i.test(String(error))) {
      throw new NatsPermissionError(
        `NATS refused the ${permissions.holder}'s credential (${error instanceof Error ? error.message : String(error)}); check NATS_URL and the NATS_* credential settings`,
      );
    }
    throw error;
  }
}

/**
 * Tries every grant of `permissions` once, on a connection of its own with the process's
 * credentials, so that a missing grant stops the start with one line naming the subject and the
 * operation, rather than as a timeout at the first call that needs it. Subscriptions are made
 * and dropped; publishes are probes nobody acts on (see PERMISSION_PROBE_HEADER). A server without
 * authorization allows everything, and the check passes at once.
 */
export async function checkNatsPermissions(servers: NatsServers | string, permissions: NatsPermissions): Promise<{ authorizationRequired: boolean }> {
  const connection = await connectAs(servers, permissions);
  const authorizationRequired = connection.info?.auth_required === true;
  const denied: string[] = [];
  const watching = (async () => {
    for await (const status of connection.status()) {
      if (status.type !== 'error' || !(status.error instanceof errors.PermissionViolationError)) continue;
      const { operation, subject } = status.error;
      const grants = operation === 'publish' ? permissions.publish : permissions.subscribe;
      const grant = grants.find((candidate) => (operation === 'publish' ? probeSubject(candidate.subject) : candidate.subject) === subject);
      denied.push(grant ? holderMessage(permissions, operation === 'publish' ? 'publish' : 'subscribe', grant) : status.error.message);
    }
  })();
  try {
    const replies = `${permissions.inboxPrefix}.${PROBE_TOKEN}`;
    const subscriptions = permissions.subscribe.map((grant) => connection.subscribe(grant.subject));
    const headers = natsHeaders();
    headers.set(PERMISSION_PROBE_HEADER, '1');
    headers.set('Nats-Expected-Stream', PROBE_STREAM);
    for (const grant of permissions.publish) connection.publish(probeSubject(grant.subject), PROBE_BODY, { headers, reply: replies });
    await connection.flush();
    // The server answers each refused operation before the flush's PONG; its -ERR lines reach the status iterator a turn later.
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const subscription of subscriptions) subscription.unsubscribe();
  } finally {
    await connection.close();
    await watching;
  }
  if (denied.length > 0) throw new NatsPermissionError(denied[0] + (denied.length > 1 ? ` (and ${denied.length - 1} more)` : ''));
  return { authorizationRequired };
}
