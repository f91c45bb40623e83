import { RelayError, TENANT_PATTERN } from '@app/contracts';

/**
 * The tenant a request names (`params.tenant`, where the HTTP+JSON binding also puts the tenant of
 * its path), or undefined when it names none: absent, null or `''`, as a client of an interface
 * without a tenant sends it.
 */
export function requestedTenant(params: Record<string, unknown>): string | undefined {
  const tenant = params.tenant;
  if (tenant === undefined || tenant === null || tenant === '') return undefined;
  if (typeof tenant !== 'string') throw new RelayError('invalid_params', 'tenant must be a string', { field: 'tenant' });
  if (!TENANT_PATTERN.test(tenant)) {
    throw new RelayError('invalid_params', 'tenant must be 1 to 63 lowercase letters, digits, ".", "_" or "-" (not first), as an agent card names it', {
      field: 'tenant',
    });
  }
  return tenant;
}

/**
 * Whether a request naming `tenant` reaches the agent of its endpoint: only when that agent's org
 * has this tenant. Otherwise the answer is `agent_not_found`, worded the same whether the agent
 * exists in another org, is disabled, or does not exist, so a tenant never tells another org's
 * agents apart from missing ones. The relay endpoint `/a2a` is no agent's and has no tenant.
 */
export function tenantRefusal(endpointHandle: string | null, tenant: string, agentTenant: string | null): RelayError | null {
  if (endpointHandle === null) {
    return new RelayError('invalid_params', "The relay endpoint /a2a has no tenant: a tenant is an org's, sent to one of its agents' endpoints /a2a/{handle}", {
      field: 'tenant',
    });
  }
  if (agentTenant === tenant) return null;
  return new RelayError('agent_not_found', `No agent ${endpointHandle} at the tenant ${tenant}`, { handle: endpointHandle, tenant });
}
