// The floor of a call through a gateway of coffer's shape, with none of
// coffer's code: uWebSockets.js takes the client's POST on the main thread,
// which renames the tool and hands the request to the worker thread of its
// upstream (one bare worker per upstream, with the actors' limits); the worker
// writes it on a keep-alive socket to the upstream as one string and reads a
// content-length answer by hand, and the main thread writes that answer back.
// No session, gate, log, deadline or check: what a call through one more
// process and one thread hop costs here at all. Serves initialize and
// tools/call `u<K>__<tool>` for upstreams given as base URLs (usage: --help);
// prints {"port","pid"} once listening. It speaks the 2026-07-28 era too, with
// only what that era asks of every intermediary: server/discover, the
// standard headers checked against the body, and towards the upstream its own
// envelope and the standard headers (the answer goes back as it came).
import { Worker } from 'node:worker_threads';
import { ACTOR_RESOURCE_LIMITS } from '../src/upstreams/actor.js';
import { uws } from '../src/http/uws.js';
import { SERVER_INFO_META_KEY } from '../src/mcp/modern/wire.js';
import { MODERN_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../src/protocol/mcp-versions.js';
import { META } from '../src/protocol/modern-envelope.js';
import { parseOrExit } from './cli-args.js';

const USAGE = 'usage: node dist/bench/relay-floor.js --upstreams URL[,URL...]   (upstream K is the K-th URL, its tools u<K>__<tool>)';
const OPTIONS = { upstreams: { type: 'string' } } as const;
const values = parseOrExit(OPTIONS, USAGE, (given) => (given.upstreams ? null : '--upstreams is required'));
const urls = values.upstreams!.split(',').map((text) => new URL(text));

// One upstream's worker: a few keep-alive sockets, each carrying one exchange at a time.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { host, port, path } = workerData;
const head = 'POST ' + path + ' HTTP/1.1\\r\\nHost: ' + host + ':' + port + '\\r\\nContent-Type: application/json\\r\\nAccept: application/json, text/event-stream\\r\\n';
const idle = [];
function open() {
  const socket = net.connect(port, host);
  socket.setNoDelay(true);
  let buffer = '';
  let done = null;
  socket.on('data', (chunk) => {
    buffer += chunk.toString('latin1');
    const end = buffer.indexOf('\\r\\n\\r\\n');
    if (end === -1) return;
    const framed = /content-length: *(\\d+)/i.exec(buffer.slice(0, end));
    if (!framed) throw new Error('it reads answers framed by content-length only');
    const length = Number(framed[1]);
    if (buffer.length < end + 4 + length) return;
    const body = Buffer.from(buffer.slice(end + 4, end + 4 + length), 'latin1').toString('utf8');
    buffer = buffer.slice(end + 4 + length);
    const finish = done;
    done = null;
    idle.push(connection);
    finish(body);
  });
  const connection = { send(body, headers, answer) { done = answer; socket.write(head + headers + 'Content-Length: ' + Buffer.byteLength(body) + '\\r\\n\\r\\n' + body); } };
  return connection;
}
parentPort.on('message', ({ id, body, headers }) => {
  (idle.pop() ?? open()).send(body, headers, (answer) => parentPort.postMessage({ id, body: answer }));
});`;

const workers = urls.map((url) => new Worker(WORKER, { eval: true, resourceLimits: ACTOR_RESOURCE_LIMITS, workerData: { host: url.hostname, port: Number(url.port), path: url.pathname } }));
const waiting = new Map<number, (body: string) => void>();
let nextId = 0;
for (const worker of workers) {
  // A floor that cannot relay measures nothing: it stops at once with its reason on stderr, rather than leave calls to time out.
  worker.on('error', (error) => {
    process.stderr.write(`relay floor: ${error.message}\n`);
    process.exit(1);
  });
  worker.on('message', ({ id, body }: { id: number; body: string }) => {
    const answer = waiting.get(id);
    waiting.delete(id);
    answer?.(body);
  });
}

const NAME = /^u(\d+)__(.+)$/;
const MODERN = MODERN_PROTOCOL_VERSION;
const LEGACY = new Set(SUPPORTED_PROTOCOL_VERSIONS);
const VERSION_META = META.protocolVersion;
const FLOOR_INFO = { name: 'relay-floor', version: '0' };
/** The floor's envelope towards its upstreams in the modern era: a gateway is its upstream's client. */
const ENVELOPE = { [VERSION_META]: MODERN, [META.clientCapabilities]: {}, [META.clientInfo]: FLOOR_INFO };
const SERVER_INFO = { [SERVER_INFO_META_KEY]: FLOOR_INFO };

/** The headers each era has the server check against the body ('' when absent). */
interface Standard {
  version: string;
  method: string;
  name: string;
}

type Reply = (status: string, body: string, headers?: Record<string, string>) => void;

const failure = (id: unknown, code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });

/** A modern request's standard headers agree with its body; a legacy one's protocol version header, when sent, is one the floor speaks. */
function agrees(message: { method?: string; params?: Record<string, unknown> }, meta: Record<string, unknown> | undefined, standard: Standard): boolean {
  if (meta?.[VERSION_META] === undefined) return standard.version === '' || LEGACY.has(standard.version) || message.method === 'initialize';
  return standard.version === meta[VERSION_META] && standard.method === message.method && (message.method !== 'tools/call' || standard.name === message.params?.name);
}

function handle(body: string, standard: Standard, reply: Reply): void {
  const message = JSON.parse(body) as { id?: unknown; method?: string; params?: Record<string, unknown> };
  if (message.id === undefined) return reply('202 Accepted', '');
  const meta = message.params?._meta as Record<string, unknown> | undefined;
  if (!agrees(message, meta, standard)) return reply('400 Bad Request', failure(message.id, -32020, 'the standard headers do not agree with the body'));
  const modern = meta?.[VERSION_META] !== undefined;
  if (message.method === 'initialize') {
    const result = { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: FLOOR_INFO };
    return reply('200 OK', JSON.stringify({ jsonrpc: '2.0', id: message.id, result }), { 'mcp-session-id': 'floor' });
  }
  if (message.method === 'server/discover' && modern) {
    const result = { resultType: 'complete', _meta: SERVER_INFO, supportedVersions: [MODERN], capabilities: { tools: {} } };
    return reply('200 OK', JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
  }
  const match = message.method === 'tools/call' ? NAME.exec(String(message.params?.name)) : null;
  const worker = match ? workers[Number(match[1])] : undefined;
  if (!worker) return reply('200 OK', failure(message.id, -32601, 'the floor serves tools/call only'));
  const id = nextId++;
  waiting.set(id, (answer) => reply('200 OK', answer));
  const params: Record<string, unknown> = { ...message.params, name: match![2] };
  if (modern) params._meta = ENVELOPE;
  const headers = modern ? `MCP-Protocol-Version: ${MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: ${match![2]}\r\n` : '';
  worker.postMessage({ id, body: JSON.stringify({ ...message, params }), headers });
}

const app = uws.App();
app.post('/mcp', (res, req) => {
  let aborted = false;
  res.onAborted(() => (aborted = true));
  const standard: Standard = { version: req.getHeader('mcp-protocol-version'), method: req.getHeader('mcp-method'), name: req.getHeader('mcp-name') };
  const chunks: Buffer[] = [];
  res.onData((chunk, last) => {
    chunks.push(Buffer.from(chunk.slice(0)));
    if (!last) return;
    handle(Buffer.concat(chunks).toString('utf8'), standard, (status, body, headers = {}) => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(status);
        for (const [name, value] of Object.entries(headers)) res.writeHeader(name, value);
        if (body !== '') res.writeHeader('content-type', 'application/json');
        res.end(body);
      });
    });
  });
});
app.get('/mcp', (res) => void res.writeStatus('405 Method Not Allowed').end());
app.del('/mcp', (res) => void res.end());
app.listen('127.0.0.1', 0, (socket) => {
  if (!socket) throw new Error('could not listen on 127.0.0.1');
  process.stdout.write(`${JSON.stringify({ port: uws.us_socket_local_port(socket), pid: process.pid })}\n`);
});
const stop = (): void => process.exit(0);
process.on('SIGTERM', stop);
process.on('disconnect', stop);
