import { RequestMethod, type DynamicModule, type Type } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, MODULE_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { EdgeConfig } from '../edge.config';
import { EdgeModule } from '../edge.module';
import { ADMIN_ROLES, LEAST_ROLE, PUBLIC_ADMIN_ROUTE } from './admin-roles';
import { AdminTokenGuard } from './sign-in/admin-token.guard';
import { ADMIN_ROUTE_SCOPES, routeScopeOf } from './org-scope/admin-route-scopes';

interface AdminRoute {
  route: string;
  least: unknown;
  public: boolean;
  guarded: boolean;
}

function controllersOf(module: Type | DynamicModule, seen = new Set<unknown>()): Type[] {
  const type = 'module' in module ? module.module : module;
  if (seen.has(module)) return [];
  seen.add(module);
  const dynamic = 'module' in module ? module : undefined;
  const controllers: Type[] = [...((Reflect.getMetadata(MODULE_METADATA.CONTROLLERS, type) as Type[] | undefined) ?? []), ...(dynamic?.controllers ?? [])];
  const imports = [...((Reflect.getMetadata(MODULE_METADATA.IMPORTS, type) as Array<Type | DynamicModule> | undefined) ?? []), ...(dynamic?.imports ?? [])];
  for (const imported of imports) controllers.push(...controllersOf(imported as Type | DynamicModule, seen));
  return [...new Set(controllers)];
}

/** Every route of the edge's controllers under /admin, with what it declares. */
function adminRoutes(): AdminRoute[] {
  const routes: AdminRoute[] = [];
  for (const controller of controllersOf(EdgeModule.forRoot(new EdgeConfig()))) {
    const base = String(Reflect.getMetadata(PATH_METADATA, controller) ?? '').replace(/^\/|\/$/g, '');
    const prototype = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const handler = prototype[name];
      if (name === 'constructor' || typeof handler !== 'function' || Reflect.getMetadata(PATH_METADATA, handler) === undefined) continue;
      const path = [base, String(Reflect.getMetadata(PATH_METADATA, handler)).replace(/^\/|\/$/g, '')].filter(Boolean).join('/');
      if (path !== 'admin' && !path.startsWith('admin/')) continue;
      const guards = [
        ...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[]) ?? []),
        ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[]) ?? []),
      ];
      routes.push({
        route: `${RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number]} /${path}`,
        // As the guard reads it: a change's role is its own, a read may take its class's.
        least:
          Reflect.getMetadata(LEAST_ROLE, handler) ??
          (RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number] === 'GET' ? Reflect.getMetadata(LEAST_ROLE, controller) : undefined),
        public: Reflect.getMetadata(PUBLIC_ADMIN_ROUTE, handler) === true,
        guarded: guards.includes(AdminTokenGuard),
      });
    }
  }
  return routes;
}

describe('admin routes', () => {
  const routes = adminRoutes();

  it('finds the admin routes of every controller', () => {
    expect(routes.length).toBeGreaterThan(25);
    expect(routes.map((entry) => entry.route)).toEqual(
      expect.arrayContaining([
        'GET /admin/tasks',
        'POST /admin/agents/:handle/keys',
        'POST /admin/deliveries/:id/redeliver',
        'GET /admin/audit',
        'GET /admin/events',
      ]),
    );
  });

  it('each declares its least role (a change on the route itself) and is guarded, or is declared public (signing in)', () => {
    const undeclared = routes.filter((entry) => !(entry.public ? !entry.guarded : entry.guarded && ADMIN_ROLES.includes(entry.least as never)));
    expect(undeclared).toEqual([]);
  });

  it('gives every guarded route an org scope, and the scope table names no route that does not exist', () => {
    const guarded = routes.filter((entry) => entry.guarded);
    const unscoped = guarded.filter((entry) => {
      const [method, path] = entry.route.split(' ');
      return routeScopeOf(method, path) === undefined;
    });
    expect(unscoped).toEqual([]);
    const stale = Object.keys(ADMIN_ROUTE_SCOPES).filter((route) => !guarded.some((entry) => entry.route === route));
    expect(stale).toEqual([]);
  });

  it('gives each route the least role of its class of change', () => {
    const least = Object.fromEntries(routes.map((entry) => [entry.route, entry.public ? 'public' : entry.least]));
    expect(least).toMatchObject({
      'GET /admin/tasks': 'auditor',
      'GET /admin/audit': 'auditor',
      'GET /admin/tasks/:id/chain': 'auditor',
      'GET /admin/search': 'viewer',
      'POST /admin/deliveries/:id/redeliver': 'operator',
      'POST /admin/deliveries/redeliver': 'operator',
      'PUT /admin/agents/:handle/trust': 'operator',
      'DELETE /admin/agents/:handle': 'operator',
      'POST /admin/agents': 'admin',
      'POST /admin/agents/:handle/keys': 'admin',
      'DELETE /admin/agents/:handle/keys/:prefix': 'admin',
      'POST /admin/agents/:handle/webhook-secret': 'admin',
      'PATCH /admin/agents/:handle': 'admin',
      'POST /admin/session': 'public',
      'GET /admin/session/oidc/start': 'public',
      'GET /admin/session/oidc/callback': 'public',
      'DELETE /admin/session': 'auditor',
    });
  });
});
