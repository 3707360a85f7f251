// /servers routes: register, list, show, update, enable/disable, remove.
import type { ServersApi } from '../../config-file/guard.js';
import type { ServerView } from '../../registry/registry.js';
import { REDACTED } from '../../registry/secret-args.js';
import type { Route } from '../http-api.js';

/**
 * The answer to an add or update, with `warnings` when the command's arguments look like
 * secrets (they are the ones its view masks): sealed at rest, but readable on the command line.
 */
function withWarnings(view: ServerView): ServerView & { warnings?: string[] } {
  const masked = view.transport.type === 'stdio' ? view.transport.args.filter((arg) => arg.includes(REDACTED)).length : 0;
  if (masked === 0) return view;
  const warning =
    `${masked} argument(s) of the command look like secrets: coffer stores them sealed and shows them as "${REDACTED}", ` +
    `but an upstream's command line is readable by every user of this machine (ps, /proc): pass secrets in env instead (--env KEY=VALUE)`;
  return { ...view, warnings: [warning] };
}

export function serverRoutes(registry: ServersApi): Route[] {
  return [
    { method: 'GET', pattern: '/servers', handler: async () => ({ status: 200, body: { servers: await registry.list() } }) },
    { method: 'POST', pattern: '/servers', handler: async (request) => ({ status: 201, body: withWarnings(await registry.add(request.body, request.actor)) }) },
    { method: 'GET', pattern: '/servers/:name', handler: async (_request, params) => ({ status: 200, body: await registry.get(params.name!) }) },
    { method: 'PATCH', pattern: '/servers/:name', handler: async (request, params) => ({ status: 200, body: withWarnings(await registry.update(params.name!, request.body, request.actor)) }) },
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
