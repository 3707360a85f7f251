// One process hosting many Streamable HTTP MCP servers on one 127.0.0.1 port,
// path per server: /s/<i>/mcp. Any index exists (servers are virtual: a
// behaviour per index, default from the command line), so 500 upstreams cost
// one socket listener, not 500. Also /floor/mcp: a static server answering a
// merged list from memory (the "floor"), installed by the harness.
//
//   node dist/bench/synthetic/http-host.js [--tools N] [--latency MS]
//   prints {"port":N,"pid":N} on stdout once listening.
//
// Control (harness only): POST /ctl/config {defaults?, servers?: {"<i>": {hang?, latencyMs?, tools?, modern?}},
//                                           ranges?: [{from, to, behaviour}]}  (to exclusive)
//                         POST /ctl/floor {tools: [...]}
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { answer, DEFAULT_BEHAVIOUR, HANG, type RpcMessage, type ServerBehaviour } from './mcp-core.js';
import { serveLocal } from './serve-local.js';

const { values } = parseArgs({ options: { tools: { type: 'string', default: '20' }, latency: { type: 'string', default: '0' } } });
let defaults: ServerBehaviour = { ...DEFAULT_BEHAVIOUR, tools: Number(values.tools), latencyMs: Number(values.latency) };
const overrides = new Map<number, Partial<ServerBehaviour>>();
let floorTools: unknown[] = [];
/** Requests that hang stay here until their client goes away, so shutdown can end them. */
const hung = new Set<ServerResponse>();

const ranges: Array<{ from: number; to: number; behaviour: Partial<ServerBehaviour> }> = [];

const behaviourOf = (index: number): ServerBehaviour => {
  let behaviour: ServerBehaviour = defaults;
  for (const range of ranges) if (index >= range.from && index < range.to) behaviour = { ...behaviour, ...range.behaviour };
  return { ...behaviour, ...overrides.get(index) };
};

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function sendJson(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

async function control(path: string, body: string, res: ServerResponse): Promise<void> {
  const parsed = body ? (JSON.parse(body) as Record<string, unknown>) : {};
  if (path === '/ctl/config') {
    for (const range of (parsed.ranges ?? []) as typeof ranges) ranges.push(range);
    if (parsed.defaults) defaults = { ...defaults, ...(parsed.defaults as Partial<ServerBehaviour>) };
    for (const [index, behaviour] of Object.entries((parsed.servers ?? {}) as Record<string, Partial<ServerBehaviour>>)) {
      overrides.set(Number(index), { ...overrides.get(Number(index)), ...behaviour });
      // A server that stops hanging: nothing to do; one that starts: only new requests hang.
    }
    return sendJson(res, 200, '{"ok":true}');
  }
  if (path === '/ctl/floor') {
    floorTools = (parsed.tools ?? []) as unknown[];
    return sendJson(res, 200, JSON.stringify({ ok: true, tools: floorTools.length }));
  }
  sendJson(res, 404, '{"error":"no such control"}');
}

/** One MCP POST: a single message (the SDK client never batches). */
async function mcpPost(res: ServerResponse, body: string, behaviour: ServerBehaviour, name: string, floor: boolean): Promise<void> {
  const message = JSON.parse(body) as RpcMessage;
  if (floor && message.method === 'tools/list' && message.id !== undefined) {
    // The floor serialises its in-memory list per request, as any static server would.
    return sendJson(res, 200, JSON.stringify({ jsonrpc: '2.0', id: message.id, result: { tools: floorTools } }));
  }
  const reply = await answer(message, behaviour, name);
  if (reply === null) {
    res.writeHead(202).end();
    return;
  }
  if (reply === HANG) {
    hung.add(res);
    res.once('close', () => hung.delete(res));
    return;
  }
  const headers: Record<string, string> = message.method === 'initialize' ? { 'mcp-session-id': randomUUID() } : {};
  // (req is already destroyed once its body was read: ask the response socket instead.)
  if (!res.destroyed) sendJson(res, 200, reply, headers);
}

const PATH = /^\/s\/(\d+)\/mcp$/;

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0]!;
  readBody(req)
    .then(async (body) => {
      if (path.startsWith('/ctl/') && req.method === 'POST') return control(path, body, res);
      const match = PATH.exec(path);
      const floor = path === '/floor/mcp';
      if (!match && !floor) return void res.writeHead(404).end();
      // No standalone SSE stream: the client then holds no extra connection per server.
      if (req.method === 'GET') return void res.writeHead(405, { allow: 'POST, DELETE' }).end();
      if (req.method === 'DELETE') return void res.writeHead(200).end();
      if (req.method !== 'POST') return void res.writeHead(405).end();
      const index = match ? Number(match[1]) : -1;
      return mcpPost(res, body, floor ? defaults : behaviourOf(index), floor ? 'floor' : `s${index}`, floor);
    })
    .catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 400, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: String(error) } }));
    });
});
serveLocal(server, undefined, () => {
  for (const res of hung) res.destroy();
});
