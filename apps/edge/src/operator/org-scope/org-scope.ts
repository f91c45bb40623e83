import { Inject, Injectable } from '@nestjs/common';
import {
  ADMIN_TASKS_SUBJECTS,
  canActOn,
  describeGrant,
  isValidHandle,
  normalizeHandle,
  NOTIFIER_SUBJECTS,
  orgOf,
  RelayError,
  roleIn,
  orgsInScope,
  roleAllows,
  TASK_LIMITS,
  type AdminRole,
  type RoleGrant,
} from '@app/contracts';
import { NatsRpcClient } from '@app/messaging';
import type { RouteScope } from './admin-route-scopes';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a request the scope admits acts with. */
export interface ActingScope {
  /** The orgs whose objects it may read or change (`all`: a relay-wide role). */
  orgs: 'all' | string[];
  /** The role that decides what answers hide (bodies from an auditor). */
  role: AdminRole;
}

/** What the guard knows of a request when it checks its scope. */
export interface ScopedRequest {
  /** `METHOD /path` as registered, for messages. */
  route: string;
  params: Record<string, string>;
  body: unknown;
}

function notFound(scope: RouteScope, params: Record<string, string>, orgs: readonly string[] = []): RelayError {
  switch (scope) {
    case 'agent':
      return new RelayError('agent_not_found', `No agent with the handle ${params.handle ?? ''}`);
    case 'new-agent':
      // As when the org does not exist and the relay registers only in orgs an admin created.
      return new RelayError('org_not_found', `No org named ${orgs[0] ?? ''}`, { org: orgs[0], field: 'handle' });
    case 'org':
      return new RelayError('org_not_found', `No org named ${params.name ?? ''}`, { org: params.name });
    case 'delivery':
      return new RelayError('delivery_not_found', undefined, { id: params.id });
    default:
      return new RelayError('task_not_found', `No task with id ${(params.id ?? '').slice(0, 64)}`, { task_id: (params.id ?? '').slice(0, 64) });
  }
}

/**
 * Decides whether a person's roles reach the object an admin route acts on (`canActOn`, the one
 * rule): what is not in any of their orgs is not found (404, as if it did not exist), what is in an
 * org where their role is too weak is refused (403 naming the org). Relay-wide roles never look anything up.
 */
@Injectable()
export class OrgScope {
  constructor(@Inject(NatsRpcClient) private readonly rpc: NatsRpcClient) {}

  /**
   * Throws the refusal, or returns what the caller acts with: the orgs a list may show (`all` for a
   * relay-wide role) and the role that decides what it hides (their role in the object's org; for a
   * list, the weakest role of the orgs it shows, so that bodies hidden from an auditor in one org stay hidden).
   */
  async check(grants: readonly RoleGrant[], least: AdminRole, scope: RouteScope, request: ScopedRequest): Promise<ActingScope> {
    const orgs = orgsInScope(grants, least);
    const acting = grants.filter((grant) => roleAllows(grant.role, least) && (grant.org === null || orgs === 'all' || orgs.includes(grant.org)));
    const weakest = acting
      .map((grant) => grant.role)
      .reduce<AdminRole | undefined>((weaker, role) => (weaker && roleAllows(role, weaker) ? weaker : role), undefined);
    const listing: ActingScope = { orgs, role: weakest ?? least };
    if (scope === 'session') return listing;
    if (scope === 'listed') {
      if (orgs !== 'all' && orgs.length === 0) {
        throw new RelayError('role_forbidden', `${request.route} needs the role ${least} or stronger; your roles are ${grants.map(describeGrant).join(', ')}`, {
          least_role: least,
        });
      }
      return listing;
    }
    if (scope === 'relay') {
      if (orgs === 'all') return listing;
      throw new RelayError(
        'role_forbidden',
        `${request.route} acts on the whole relay and needs a relay-wide role ${least} or stronger; your roles are ${grants.map(describeGrant).join(', ')}`,
        { least_role: least, scope: 'relay' },
      );
    }
    if (orgs === 'all') return listing;
    const objectOrgs = await this.orgsOf(scope, request);
    if (objectOrgs === null) {
      if (acting.length === 0) throw new RelayError('role_forbidden', `${request.route} needs the role ${least} or stronger`, { least_role: least });
      return listing;
    }
    const decision = canActOn(grants, least, objectOrgs);
    if (decision.allowed) {
      const roles = objectOrgs.map((org) => roleIn(grants, org)).filter((role): role is AdminRole => role !== undefined && roleAllows(role, least));
      return { orgs: objectOrgs, role: roles.reduce((stronger, role) => (roleAllows(role, stronger) ? role : stronger)) };
    }
    if (decision.refusal === 'not_found') throw notFound(scope, request.params, objectOrgs);
    throw new RelayError('role_forbidden', `${request.route} needs the role ${least} or stronger in ${decision.org}; you are ${decision.role} there`, {
      org: decision.org,
      role: decision.role,
      least_role: least,
    });
  }

  /** The orgs the route's object belongs to; null when the request names no well-formed object (its own validation answers it). */
  private async orgsOf(scope: RouteScope, request: ScopedRequest): Promise<string[] | null> {
    const { params } = request;
    switch (scope) {
      case 'agent':
        return [orgOf(normalizeHandle(params.handle ?? '') as string)];
      case 'new-agent': {
        const handle = normalizeHandle((request.body as { handle?: unknown } | undefined)?.handle);
        return isValidHandle(handle) ? [orgOf(handle)] : null;
      }
      case 'org':
        return [(params.name ?? '').trim().toLowerCase()];
      case 'task':
      case 'held-task': {
        const id = params.id ?? '';
        if (id.length > TASK_LIMITS.taskIdChars) throw notFound(scope, params);
        const { task } = await this.rpc.request(ADMIN_TASKS_SUBJECTS.get, { task_id: id });
        // A held handoff is decided by the org whose rule held it: hold and tool-prompt rules are its recipient's.
        return scope === 'held-task' ? [orgOf(task.recipient.handle)] : [orgOf(task.sender.handle), orgOf(task.recipient.handle)];
      }
      case 'delivery': {
        if (!UUID.test(params.id ?? '')) throw notFound(scope, params);
        const delivery = await this.rpc.request(NOTIFIER_SUBJECTS.getDelivery, { id: params.id });
        return [orgOf(delivery.target_handle)];
      }
      default:
        return null;
    }
  }
}
