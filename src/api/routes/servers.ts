// /servers routes: register, list, show, update, enable/disable, remove.
import type { Registry } from '../../registry/registry.js';
import type { Route } from '../http-api.js';

export function serverRoutes(registry: Registry): Route[] {
  return [
    { method: 'GET', pattern: '/servers', handler: async () => ({ status: 200, body: { servers: await registry.list() } }) },
    { method: 'POST', pattern: '/servers', handler: async (request) => ({ status: 201, body: await registry.add(request.body, 'api') }) },
    { method: 'GET', pattern: '/servers/:name', handler: async (_request, params) => ({ status: 200, body: await registry.get(params.name!) }) },
    { method: 'PATCH', pattern: '/servers/:name', handler: async (request, params) => ({ status: 200, body: await registry.update(params.name!, request.body, 'api') }) },
    { method: 'POST', pattern: '/servers/:name/enable', handler: async (_request, params) => ({ status: 200, body: await registry.setEnabled(params.name!, true, 'api') }) },
    { method: 'POST', pattern: '/servers/:name/disable', handler: async (_request, params) => ({ status: 200, body: await registry.setEnabled(params.name!, false, 'api') }) },
    {
      method: 'DELETE',
      pattern: '/servers/:name',
      handler: async (_request, params) => {
        await registry.remove(params.name!, 'api');
        return { status: 204 };
      },
    },
  ];
}
