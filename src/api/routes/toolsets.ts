// /toolsets: named views over the merged surface, and the binding of a client
// credential to one (PATCH /clients/{name} {toolset}). Each toolset is shown
// with its endpoint and the clients bound to it; what one holds now is asked
// apart (it lists every server of the set live).
import type { DbWriterCalls } from '../../db/writer-handle.js';
import type { ToolsetRecord } from '../../protocol/toolsets.js';
import { toolsetField } from '../../toolsets/spec.js';
import type { Holdings } from '../../toolsets/holdings.js';
import type { Toolsets } from '../../toolsets/toolsets.js';
import type { Route } from '../http-api.js';

type ClientReader = Pick<DbWriterCalls, 'listClients'>;

export type ToolsetsApi = Pick<Toolsets, 'list' | 'get' | 'add' | 'update' | 'remove' | 'bind'>;

export function toolsetRoutes(toolsets: ToolsetsApi, clients: ClientReader, holdings: (toolset: string) => Promise<Holdings>): Route[] {
  const view = async (record: ToolsetRecord) => {
    const bound = (await clients.listClients()).filter((client) => client.toolset === record.name).map((client) => client.name);
    return { ...record, endpoint: `/mcp/${record.name}`, clients: bound };
  };
  return [
    { method: 'GET', pattern: '/toolsets', handler: async () => ({ status: 200, body: { toolsets: await Promise.all(toolsets.list().map(view)) } }) },
    { method: 'POST', pattern: '/toolsets', handler: async (request) => ({ status: 201, body: await view(await toolsets.add(request.body, request.actor)) }) },
    { method: 'GET', pattern: '/toolsets/:name', handler: async (_request, params) => ({ status: 200, body: await view(toolsets.get(params.name!)) }) },
    {
      method: 'GET',
      pattern: '/toolsets/:name/holds',
      handler: async (_request, params) => {
        const { name } = toolsets.get(params.name!);
        return { status: 200, body: { toolset: name, holds: await holdings(name) } };
      },
    },
    { method: 'PATCH', pattern: '/toolsets/:name', handler: async (request, params) => ({ status: 200, body: await view(await toolsets.update(params.name!, request.body, request.actor)) }) },
    {
      method: 'DELETE',
      pattern: '/toolsets/:name',
      handler: async (request, params) => {
        await toolsets.remove(params.name!, request.actor);
        return { status: 204 };
      },
    },
    {
      method: 'PATCH',
      pattern: '/clients/:name',
      handler: async (request, params) => {
        const { name, created_at, toolset } = await toolsets.bind(params.name!, toolsetField(request.body, true), request.actor);
        return { status: 200, body: { name, created_at, toolset } };
      },
    },
  ];
}
