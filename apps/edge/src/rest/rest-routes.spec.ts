import { RelayError } from '@app/contracts';
import { describePath, matchRestRoute, matchTenantRestRoute, REST_ROUTES, withPathTenant } from './rest-routes';

const segments = (path: string): string[] => path.split('/').slice(1);

describe('the HTTP+JSON route table', () => {
  it.each([
    ['1.0', 'POST', '/message:send', 'send'],
    ['1.0', 'POST', '/message:stream', 'stream'],
    ['1.0', 'GET', '/tasks', 'list'],
    ['1.0', 'GET', '/tasks/T1', 'get'],
    ['1.0', 'GET', '/tasks/T1:subscribe', 'resubscribe'],
    ['1.0', 'POST', '/tasks/T1:subscribe', 'resubscribe'],
    ['1.0', 'POST', '/tasks/T1:cancel', 'cancel'],
    ['1.0', 'POST', '/tasks/T1/pushNotificationConfigs', 'push_config_set'],
    ['1.0', 'GET', '/tasks/T1/pushNotificationConfigs', 'push_config_list'],
    ['1.0', 'GET', '/tasks/T1/pushNotificationConfigs/C1', 'push_config_get'],
    ['1.0', 'DELETE', '/tasks/T1/pushNotificationConfigs/C1', 'push_config_delete'],
    ['1.0', 'GET', '/extendedAgentCard', 'extended_card'],
    ['0.3', 'POST', '/message:send', 'send'],
    ['0.3', 'GET', '/tasks/T1', 'get'],
    ['0.3', 'POST', '/tasks/T1:cancel', 'cancel'],
    ['0.3', 'GET', '/card', 'extended_card'],
  ] as const)('%s %s %s is %s', (version, verb, path, canonical) => {
    expect(matchRestRoute(version, verb, segments(path))?.route.canonical).toBe(canonical);
  });

  it('reads the task and config ids from the path, the verb after the last colon', () => {
    expect(matchRestRoute('1.0', 'GET', segments('/tasks/T1/pushNotificationConfigs/C1'))).toMatchObject({ id: 'T1', configId: 'C1' });
    expect(matchRestRoute('1.0', 'POST', segments('/tasks/urn:x:T1:cancel'))).toMatchObject({ id: 'urn:x:T1' });
  });

  it.each([
    ['1.0', 'GET', '/tasks/T1:cancel'],
    ['1.0', 'POST', '/tasks/T1:frobnicate'],
    ['1.0', 'POST', '/tasks/T1'],
    ['1.0', 'PUT', '/tasks/T1'],
    ['1.0', 'GET', '/card'],
    ['1.0', 'GET', '/tasks/'],
    ['1.0', 'GET', '/tasks/T1/pushNotificationConfigs/C1/extra'],
    ['0.3', 'GET', '/tasks'],
    ['0.3', 'GET', '/extendedAgentCard'],
  ] as const)('%s %s %s is no operation', (version, verb, path) => {
    expect(matchRestRoute(version, verb, segments(path))).toBeUndefined();
  });

  it('names an unknown path without the ids the client put in it', () => {
    expect(describePath(segments('/tasks/secret-id:frobnicate'))).toBe('/tasks/{id}:frobnicate');
    expect(describePath(segments('/tasks/T1/pushNotificationConfigs/C1/extra'))).toBe('/tasks/{id}/pushNotificationConfigs/{configId}/extra');
  });

  it('gives each verb and path of a version one operation', () => {
    for (const version of ['1.0', '0.3'] as const) {
      const keys = REST_ROUTES.filter((route) => route[version]).map((route) => `${route.verb} ${route[version]!.path}`);
      expect(new Set(keys).size).toBe(keys.length);
    }
  });

  describe('under a tenant (/{tenant}/…, v1.0)', () => {
    it.each([
      ['POST', '/pay/message:send', 'send'],
      ['POST', '/pay/message:stream', 'stream'],
      ['GET', '/pay/tasks', 'list'],
      ['GET', '/pay/tasks/T1', 'get'],
      ['GET', '/pay/tasks/T1:subscribe', 'resubscribe'],
      ['POST', '/pay/tasks/T1:cancel', 'cancel'],
      ['POST', '/pay/tasks/T1/pushNotificationConfigs', 'push_config_set'],
      ['DELETE', '/pay/tasks/T1/pushNotificationConfigs/C1', 'push_config_delete'],
      ['GET', '/pay/extendedAgentCard', 'extended_card'],
    ] as const)('%s %s is %s in the tenant pay', (verb, path, canonical) => {
      const match = matchTenantRestRoute(verb, segments(path));
      expect(match?.route.canonical).toBe(canonical);
      expect(match?.tenant).toBe('pay');
    });

    it('reads the ids after the tenant', () => {
      expect(matchTenantRestRoute('GET', segments('/pay/tasks/T1/pushNotificationConfigs/C1'))).toMatchObject({ tenant: 'pay', id: 'T1', configId: 'C1' });
    });

    it('matches the paths of the binding itself first, with no tenant', () => {
      const plain = matchTenantRestRoute('GET', segments('/tasks/T1'));
      expect(plain?.route.canonical).toBe('get');
      expect(plain?.tenant).toBeUndefined();
      // A task whose id is "tasks" is a task, not the list of a tenant "tasks" (which no org may have).
      expect(matchTenantRestRoute('GET', segments('/tasks/tasks'))).toMatchObject({ id: 'tasks' });
    });

    it.each([
      ['POST', '//message:send'],
      ['POST', '/Pay/message:send'],
      ['GET', '/v1/tasks'],
      ['GET', '/pay/other/tasks'],
      ['POST', '/pay/tasks/T1:frobnicate'],
    ] as const)('%s %s is no operation', (verb, path) => {
      expect(matchTenantRestRoute(verb, segments(path))).toBeUndefined();
    });

    it('gives the params the tenant of the path, which a tenant in the body must repeat', () => {
      expect(withPathTenant({ message: {} }, 'pay')).toEqual({ message: {}, tenant: 'pay' });
      expect(withPathTenant({ message: {}, tenant: 'pay' }, 'pay')).toEqual({ message: {}, tenant: 'pay' });
      expect(withPathTenant({ tenant: '' }, 'pay')).toEqual({ tenant: 'pay' });
      let refusal: unknown;
      try {
        withPathTenant({ tenant: 'web' }, 'pay');
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(RelayError);
      expect(refusal).toMatchObject({ reason: 'invalid_params', data: { field: 'tenant' } });
    });
  });
});
