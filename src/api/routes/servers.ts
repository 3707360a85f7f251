// /servers routes: register, list, show, update, enable/disable, remove.
import type { Registry } from '../../registry/registry.js';
import type { Route } from '../http-api.js';

export function serverRoutes(registry: Registry): Route[] {
  return [
    { method: 'GET', pattern: '/servers', handler: async () => ({ status: 200, body: { servers: await registry.list() } }) },
    { method: 'POST', pattern: '/servers', handler: async (request) => ({ status: 201, body: await registry.add(request.body, request.actor) }) },
    { method: 'GET', pattern: '/servers/:name', handler: async (_request, params) => ({ status: 200, body: await registry.get(params.name!) }) },
    { method: 'PATCH', pattern: '/servers/:name', handler: async (request, params) => ({ status: 200, body: await registry.update(params.name!, request.body, request.actor) }) },
    { method: 'POST', pattern: '/servers/:name/enable', handler: async (request, params) => ({ status: 200, body: await registry.setEnabled(params.name!, true, request.actor) }) },
    { method: 'POST', pattern: '/servers/:name/disable', handler: async (request, params) => ({ status: 200, body: await registry.setEnabled(params.name!, false, request.actor) }) },
    {
      method: 'DELETE',
      pattern: '/servers/:name',
      handler: async (request, params) => {
        await registry.remove(params.name!, request.actor);
        return { status: 204 };
      },
    },
  ];
}
