import {
  objectBody,
  optionalObjectBody,
  protoPushConfigToParams,
  protoSendToParams,
  pushConfigToProto,
  queryParams,
  streamResponseToProto,
  taskToProto,
  type CanonicalMethod,
  type Json,
} from '@app/a2a';
import { RelayError, tenantProblem, type WireVersion } from '@app/contracts';
import type { AgentCardV1 } from '../cards/agent-card';
import { agentCardV03 } from '../cards/extended-card';

export type RestVerb = 'GET' | 'POST' | 'DELETE';

/** What a route reads its params from: the body, the query string and the ids in its path. */
export interface RestRequestParts {
  body: unknown;
  query: Record<string, unknown>;
  /** `{id}` of the path (the task), `''` when the path has none. */
  id: string;
  /** `{configId}` of the path, `''` when the path has none. */
  configId: string;
}

type ParamsReader = (parts: RestRequestParts) => Record<string, unknown>;

/** A route of one binding version: where it is and how its params and result are read and written. */
export interface RestBinding {
  /** The path under the binding's root (`/a2a/{handle}`, or `/a2a/{handle}/v1` for v0.3), as clients name it in errors. */
  path: string;
  params: ParamsReader;
  /** The result as this version's body; v1.0 answers the method's result as it is (each stream event too, by version: see RestEndpoint). */
  render?: (result: Json) => unknown;
}

/** One A2A operation of the HTTP+JSON binding, in each version that has it. */
export interface RestRoute {
  verb: RestVerb;
  canonical: CanonicalMethod;
  '1.0'?: RestBinding;
  '0.3'?: RestBinding;
}

const noParams: ParamsReader = () => ({});
const taskId: ParamsReader = ({ id }) => ({ id });
const pushConfigId: ParamsReader = ({ id, configId }) => ({ taskId: id, id: configId });

/**
 * Every HTTP+JSON operation of an agent endpoint, v1.0 and v0.3 side by side (docs/dialects.md#http-json-binding):
 * the v0.3 binding's paths and proto shapes as its HTTP annotations spell them (there is no ListTasks
 * in v0.3, and its authenticated card is `GET /v1/card`).
 */
export const REST_ROUTES: readonly RestRoute[] = [
  {
    verb: 'POST',
    canonical: 'send',
    '1.0': { path: '/message:send', params: ({ body }) => objectBody(body) },
    '0.3': { path: '/message:send', params: ({ body }) => protoSendToParams(objectBody(body)), render: streamResponseToProto },
  },
  {
    verb: 'POST',
    canonical: 'stream',
    '1.0': { path: '/message:stream', params: ({ body }) => objectBody(body) },
    '0.3': { path: '/message:stream', params: ({ body }) => protoSendToParams(objectBody(body)) },
  },
  { verb: 'GET', canonical: 'list', '1.0': { path: '/tasks', params: ({ query }) => queryParams(query) } },
  {
    verb: 'GET',
    canonical: 'get',
    '1.0': { path: '/tasks/{id}', params: ({ query, id }) => ({ ...queryParams(query), id }) },
    '0.3': { path: '/tasks/{id}', params: ({ query, id }) => ({ ...queryParams(query), id }), render: taskToProto },
  },
  {
    verb: 'GET',
    canonical: 'resubscribe',
    '1.0': { path: '/tasks/{id}:subscribe', params: taskId },
    '0.3': { path: '/tasks/{id}:subscribe', params: taskId },
  },
  {
    verb: 'POST',
    canonical: 'resubscribe',
    '1.0': { path: '/tasks/{id}:subscribe', params: taskId },
    '0.3': { path: '/tasks/{id}:subscribe', params: taskId },
  },
  {
    verb: 'POST',
    canonical: 'cancel',
    '1.0': { path: '/tasks/{id}:cancel', params: ({ body, id }) => ({ ...optionalObjectBody(body), id }) },
    '0.3': { path: '/tasks/{id}:cancel', params: ({ body, id }) => ({ ...optionalObjectBody(body), id }), render: taskToProto },
  },
  {
    verb: 'POST',
    canonical: 'push_config_set',
    '1.0': { path: '/tasks/{id}/pushNotificationConfigs', params: ({ body, id }) => ({ ...objectBody(body), taskId: id }) },
    '0.3': { path: '/tasks/{id}/pushNotificationConfigs', params: ({ body, id }) => protoPushConfigToParams(objectBody(body), id), render: pushConfigToProto },
  },
  {
    verb: 'GET',
    canonical: 'push_config_list',
    '1.0': { path: '/tasks/{id}/pushNotificationConfigs', params: ({ query, id }) => ({ ...queryParams(query), taskId: id }) },
    '0.3': {
      path: '/tasks/{id}/pushNotificationConfigs',
      params: ({ id }) => ({ taskId: id }),
      render: (result) => ({ configs: (result.configs as Json[]).map(pushConfigToProto), nextPageToken: '' }),
    },
  },
  {
    verb: 'GET',
    canonical: 'push_config_get',
    '1.0': { path: '/tasks/{id}/pushNotificationConfigs/{configId}', params: pushConfigId },
    '0.3': { path: '/tasks/{id}/pushNotificationConfigs/{configId}', params: pushConfigId, render: pushConfigToProto },
  },
  {
    verb: 'DELETE',
    canonical: 'push_config_delete',
    '1.0': { path: '/tasks/{id}/pushNotificationConfigs/{configId}', params: pushConfigId },
    '0.3': { path: '/tasks/{id}/pushNotificationConfigs/{configId}', params: pushConfigId },
  },
  {
    verb: 'GET',
    canonical: 'extended_card',
    '1.0': { path: '/extendedAgentCard', params: noParams },
    // The authenticated extended card as a v0.3 proto AgentCard: the v0.3 fields, security in ProtoJSON oneof form.
    '0.3': {
      path: '/card',
      params: noParams,
      render: (result) => {
        const card = result as unknown as AgentCardV1;
        return { ...agentCardV03(card), securitySchemes: card.securitySchemes, security: card.securityRequirements };
      },
    },
  },
];

/** A request matched to its route: the operation, its binding in the request's version and the ids of its path. */
export interface RestMatch {
  route: RestRoute;
  binding: RestBinding;
  id: string;
  configId: string;
}

interface CompiledPath {
  segments: readonly string[];
  /** The verb after the last segment's `{id}` (`:cancel`), if any. */
  verb?: string;
}

function compile(path: string): CompiledPath {
  const segments = path.split('/').slice(1);
  const last = segments[segments.length - 1];
  const verbAt = last.startsWith('{') ? last.indexOf('}:') : -1;
  if (verbAt < 0) return { segments };
  return { segments: [...segments.slice(0, -1), last.slice(0, verbAt + 1)], verb: last.slice(verbAt + 2) };
}

const COMPILED = new Map<RestBinding, CompiledPath>();
for (const route of REST_ROUTES) for (const version of ['1.0', '0.3'] as const) if (route[version]) COMPILED.set(route[version], compile(route[version].path));

/** `{id}:cancel` → id `{id}`, verb `cancel` (the last colon: ids may hold colons, verbs do not). */
function splitVerb(segment: string): { id: string; verb?: string } {
  const colon = segment.lastIndexOf(':');
  return colon < 0 ? { id: segment } : { id: segment.slice(0, colon), verb: segment.slice(colon + 1) };
}

function matchPath(compiled: CompiledPath, segments: readonly string[]): { id: string; configId: string } | undefined {
  if (segments.length !== compiled.segments.length) return undefined;
  let id = '';
  let configId = '';
  for (let index = 0; index < segments.length; index += 1) {
    const pattern = compiled.segments[index];
    const isLast = index === segments.length - 1;
    let segment = segments[index];
    if (isLast && compiled.verb !== undefined) {
      const target = splitVerb(segment);
      if (target.verb !== compiled.verb) return undefined;
      segment = target.id;
    } else if (isLast && pattern === '{id}' && splitVerb(segment).verb !== undefined) {
      return undefined;
    }
    if (pattern === '{id}') id = segment;
    else if (pattern === '{configId}') configId = segment;
    else if (pattern !== segment) return undefined;
    if ((pattern === '{id}' || pattern === '{configId}') && segment === '') return undefined;
  }
  return { id, configId };
}

/**
 * The route of `verb path` in a binding version, `path` under the binding's root and already
 * URL-decoded per segment; undefined when there is none.
 */
export function matchRestRoute(version: WireVersion, verb: string, segments: readonly string[]): RestMatch | undefined {
  for (const route of REST_ROUTES) {
    const binding = route[version];
    if (!binding || route.verb !== verb) continue;
    const ids = matchPath(COMPILED.get(binding)!, segments);
    if (ids) return { route, binding, ...ids };
  }
  return undefined;
}

/** A v1.0 request matched to its route, and the tenant of its path when it was `/{tenant}/…`. */
export interface TenantRestMatch extends RestMatch {
  tenant?: string;
}

/**
 * The route of a v1.0 `verb path`, the path as the binding names it or under a first segment
 * naming a tenant (`/{tenant}/message:send`, docs/orgs.md#an-orgs-own-a2a-address). A path of the
 * binding itself wins: no tenant may be a segment those begin with (RESERVED_TENANTS). A first
 * segment no org's tenant could be is no tenant: the path names no operation, as before tenants.
 */
export function matchTenantRestRoute(verb: string, segments: readonly string[]): TenantRestMatch | undefined {
  const plain = matchRestRoute('1.0', verb, segments);
  if (plain || segments.length < 2 || tenantProblem(segments[0]) !== null) return plain;
  const match = matchRestRoute('1.0', verb, segments.slice(1));
  return match ? { ...match, tenant: segments[0] } : undefined;
}

/**
 * The params of a request whose path names a tenant: that tenant, which a tenant in the body
 * (as clients also send it there) must repeat.
 */
export function withPathTenant(params: Record<string, unknown>, tenant: string): Record<string, unknown> {
  const inBody = params.tenant;
  if (inBody !== undefined && inBody !== null && inBody !== '' && inBody !== tenant) {
    throw new RelayError('invalid_params', 'tenant in the body is not the tenant of the path /{tenant}/…', { field: 'tenant' });
  }
  return { ...params, tenant };
}

/**
 * A path as errors name it, ids replaced by their placeholders (`/tasks/{id}:foo`), so an
 * unknown operation's error never repeats what the client put in the path.
 */
export function describePath(segments: readonly string[]): string {
  const described = segments.map((segment, index) => {
    if (segments[index - 1] === 'tasks') {
      const { verb } = splitVerb(segment);
      return verb === undefined ? '{id}' : `{id}:${verb}`;
    }
    if (segments[index - 1] === 'pushNotificationConfigs') return '{configId}';
    return segment;
  });
  return `/${described.join('/')}`;
}
