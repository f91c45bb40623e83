/**
 * What each admin route acts on, for the org scope of a person's roles (docs/orgs.md#scoped-roles):
 * - `agent`: the agent of the `:handle` param (its keys, trust policy, card, upstream credentials), in its handle's org;
 * - `new-agent`: the agent the body registers, in its handle's org;
 * - `org`: the org of the `:name` param;
 * - `task`: the handoff of the `:id` param, to read it: the orgs of both its parties;
 * - `held-task`: the handoff of the `:id` param, to decide it: the org whose rule held it (its recipient's);
 * - `delivery`: the delivery of the `:id` param, in the org of the agent it notifies;
 * - `listed`: a list (or a change of many, or a summary) the route bounds to the orgs the caller's roles name;
 * - `relay`: the whole relay (relay-wide roles only, until the route can answer per org);
 * - `session`: the caller's own console session.
 * The guard refuses a route missing here to everyone, and the route tests fail on it.
 */
export type RouteScope = 'agent' | 'new-agent' | 'org' | 'task' | 'held-task' | 'delivery' | 'listed' | 'relay' | 'session';

/** Every guarded admin route (`METHOD /path` as Nest registers it) with its scope; one line per route. */
export const ADMIN_ROUTE_SCOPES: Readonly<Record<string, RouteScope>> = {
  'DELETE /admin/session': 'session',

  'POST /admin/agents': 'new-agent',
  'GET /admin/agents': 'listed',
  'GET /admin/agents/:handle': 'agent',
  'PATCH /admin/agents/:handle': 'agent',
  'DELETE /admin/agents/:handle': 'agent',
  'POST /admin/agents/:handle/keys': 'agent',
  'GET /admin/agents/:handle/keys': 'agent',
  'DELETE /admin/agents/:handle/keys/:prefix': 'agent',
  'GET /admin/agents/:handle/trust': 'agent',
  'PUT /admin/agents/:handle/trust': 'agent',
  'PUT /admin/agents/:handle/token-subject': 'agent',
  'DELETE /admin/agents/:handle/token-subject': 'agent',
  'POST /admin/agents/:handle/webhook-secret': 'agent',
  'GET /admin/agents/:handle/upstream': 'agent',
  'POST /admin/agents/:handle/upstream/refresh': 'agent',
  'POST /admin/agents/:handle/upstream/pending-change/accept': 'agent',
  'POST /admin/agents/:handle/upstream/pending-change/reject': 'agent',
  'PUT /admin/agents/:handle/upstream/tls': 'agent',
  'DELETE /admin/agents/:handle/upstream/tls': 'agent',
  'GET /admin/agents/:handle/counts': 'agent',

  'POST /admin/orgs': 'relay',
  'GET /admin/orgs': 'listed',
  'GET /admin/orgs/:name': 'org',
  'GET /admin/orgs/:name/people': 'org',
  'PATCH /admin/orgs/:name': 'relay',
  'GET /admin/people/:sub/roles': 'relay',
  'PUT /admin/people/:sub/roles': 'relay',

  'GET /admin/tasks': 'listed',
  'GET /admin/tasks/:id': 'task',
  'GET /admin/tasks/:id/chain': 'task',
  'GET /admin/tasks/:id/upstream-calls': 'task',
  'GET /admin/search': 'listed',
  'GET /admin/overview': 'listed',
  'GET /admin/events': 'listed',
  'GET /admin/audit': 'listed',

  'GET /admin/deliveries': 'listed',
  'POST /admin/deliveries/redeliver': 'listed',
  'GET /admin/deliveries/:id': 'delivery',
  'POST /admin/deliveries/:id/redeliver': 'delivery',

  'GET /admin/approvals': 'listed',
  'GET /admin/approvals/tool-prompts': 'listed',
  'GET /admin/approvals/:id': 'task',
  'POST /admin/approvals/:id/approve': 'held-task',
  'POST /admin/approvals/:id/deny': 'held-task',
  'POST /admin/approvals/:id/tool-prompts/:requestId/allow': 'held-task',
  'POST /admin/approvals/:id/tool-prompts/:requestId/deny': 'held-task',
};

/** Whether the route acts on one object (of one org, or a handoff's two). */
export function isObjectScope(scope: RouteScope): boolean {
  return scope === 'agent' || scope === 'new-agent' || scope === 'org' || scope === 'task' || scope === 'held-task' || scope === 'delivery';
}

/** The scope of `METHOD /path` (HEAD is its GET), or undefined for a route that declares none. */
export function routeScopeOf(method: string, path: string): RouteScope | undefined {
  const key = `${method === 'HEAD' ? 'GET' : method} ${path.length > 1 ? path.replace(/\/+$/, '') : path}`;
  return Object.prototype.hasOwnProperty.call(ADMIN_ROUTE_SCOPES, key) ? ADMIN_ROUTE_SCOPES[key] : undefined;
}
