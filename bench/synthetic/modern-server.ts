// A synthetic upstream of the 2026-07-28 era only (no initialize): the v2
// server package's createMcpHandler behind node:http, listing the same tool
// definitions as the legacy synthetic upstreams (mcp-core.ts), so a modern
// and a legacy path differ in their era and nothing else.
//
//   node dist/bench/synthetic/modern-server.js [--tools N]
//   prints {"port":N,"pid":N,"url":"…/mcp"} on stdout once listening.
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { createMcpHandler, Server, type McpHttpHandler } from '@modelcontextprotocol/server';
import { readBody, relay } from '../../test/fixtures/web-relay.js';
import { toolList } from './mcp-core.js';
import { serveLocal } from './serve-local.js';

const { values } = parseArgs({ options: { tools: { type: 'string', default: '20' } } });
const TOOLS = toolList(Number(values.tools));
// A long TTL, as the legacy upstreams' lists live for coffer's whole cache TTL: the warm list is then coffer's cache on both paths.
const CACHE = { ttlMs: 60_000, cacheScope: 'public' } as const;

function createModernServer(): Server {
  const server = new Server({ name: 'bench-modern', version: '1.0.0' }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler('tools/list', () => ({ tools: TOOLS, ...CACHE }) as never);
  server.setRequestHandler('tools/call', (request) => ({ content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] }) as never);
  return server;
}

const handler: McpHttpHandler = createMcpHandler(createModernServer, { legacy: 'reject' });

const server = createServer((req, res) => {
  readBody(req)
    .then((body) => (new URL(req.url ?? '/', 'http://x').pathname === '/mcp' ? relay(handler, req, res, body) : void res.writeHead(404).end()))
    .catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
});
serveLocal(server, (port) => ({ url: `http://127.0.0.1:${port}/mcp` }));
