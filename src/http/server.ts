// The uWebSockets.js server: /mcp (Streamable HTTP), /api/v1 (REST) and the web UI's files, bound
// to 127.0.0.1 only. Host and Origin are checked before anything else.
import { registerAdminWs, type AdminDeps, type AdminWs } from '../admin/admin-ws.js';
import type { ApiResponse, HttpApi } from '../api/http-api.js';
import type { Logger } from '../log.js';
import { JSONRPC } from '../protocol/errors.js';
import type { SessionRegistry } from '../mcp/sessions.js';
import { UiAssets } from '../ui/static-assets.js';
import { BodyTooLargeError, readBody, readRequest, ResponseState, sendBuffered, toFetchRequest, UwsReply, type IncomingRequest } from './bridge.js';
import { BEARER_CHALLENGE } from './bearer.js';
import { isAllowedHost, isAllowedOrigin } from './host-check.js';
import { PortTakenError } from './port-taken.js';
import { callbackHtml, OAUTH_CALLBACK_PATH } from '../oauth/callback-page.js';
import type { CallbackPage } from '../oauth/sign-ins.js';
import type { McpAuth, McpCredential } from './mcp-auth.js';
import { registerOpsRoutes, type OpsEndpoints } from './ops-routes.js';
import { uws, type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from './uws.js';
import { endpointView, refusalBody } from '../toolsets/access.js';

export const LOOPBACK = '127.0.0.1';
/** A toolset's own endpoint is /mcp/<toolset>; its names need no escaping. */
const TOOLSET_PATH = '/mcp/';

export interface HttpServerOptions {
  /** 0 picks a free port; otherwise the first free one of port … port + portRange - 1 (PortTakenError when none is). */
  port: number;
  portRange: number;
  mcpMaxBodyBytes: number;
  apiMaxBodyBytes: number;
}

export interface HttpServer {
  port: number;
  /** The admin WebSocket /admin/ws (stats; closed by close()). */
  admin: AdminWs;
  close(): void;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const HTML_HEADERS = { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' };

function sendJson(state: ResponseState, response: ApiResponse): void {
  if (response.body === undefined) sendBuffered(state, response.status, {}, '');
  else sendBuffered(state, response.status, JSON_HEADERS, JSON.stringify(response.body));
}

function envelope(status: number, code: string, message: string): ApiResponse {
  return { status, body: { error: { code, message } } };
}

const UNAUTHENTICATED_BODY = JSON.stringify({
  jsonrpc: '2.0',
  error: {
    code: JSONRPC.UNAUTHENTICATED,
    message: "missing or wrong credential: send 'Authorization: Bearer <token>' (print a client's config with 'coffer mcp client-config <client>')",
    data: { code: 'UNAUTHENTICATED' },
  },
  id: null,
});

/** Before the body is read: an unauthenticated client uploads nothing. */
function sendUnauthenticated(state: ResponseState): void {
  sendBuffered(state, 401, { ...JSON_HEADERS, 'www-authenticate': BEARER_CHALLENGE }, UNAUTHENTICATED_BODY);
}

/**
 * A declared Content-Length over the limit is refused before a byte of the
 * body is read (the client learns at once, instead of after uploading `limit`
 * bytes, and nothing is buffered). A chunked body is still cut off by readBody.
 */
function declaredTooLarge(state: ResponseState, incoming: IncomingRequest, limit: number): boolean {
  const declared = Number(incoming.headers['content-length'] ?? 0);
  if (!(declared > limit)) return false;
  sendJson(state, envelope(413, 'PAYLOAD_TOO_LARGE', `request body over ${limit} bytes`));
  return true;
}

export async function startHttpServer(
  options: HttpServerOptions,
  api: HttpApi,
  mcp: SessionRegistry,
  mcpAuth: McpAuth,
  log: Logger,
  admin: Omit<AdminDeps, 'port' | 'log'>,
  ops: OpsEndpoints,
  toolsets: { has(name: string): boolean },
  oauthCallback: ((query: URLSearchParams) => Promise<CallbackPage>) | null = null,
): Promise<HttpServer> {
  const app = uws.App();
  let port = 0;

  const guard = (state: ResponseState, incoming: IncomingRequest): boolean => {
    if (isAllowedHost(incoming.headers['host'], port) && isAllowedOrigin(incoming.headers['origin'])) return true;
    sendJson(state, envelope(403, 'FORBIDDEN_HOST', 'Host or Origin is not a loopback name of this daemon (DNS-rebinding protection)'));
    return false;
  };

  /** The request's credential and the toolset it sees, or null once it has been refused. */
  const admit = (state: ResponseState, incoming: IncomingRequest, ownEndpoint: boolean): { credential: McpCredential; toolset: string | null } | null => {
    const credential = mcpAuth.authenticate(incoming.headers['authorization']);
    if (credential === null) return (sendUnauthenticated(state), null);
    const view = endpointView(credential.toolset, ownEndpoint ? incoming.path.slice(TOOLSET_PATH.length) : null, (name) => toolsets.has(name));
    if (!view.ok) return (sendBuffered(state, view.refusal.status, JSON_HEADERS, refusalBody(view.refusal)), null);
    return { credential, toolset: view.toolset };
  };

  const serveMcp = (res: HttpResponse, req: HttpRequest, ownEndpoint: boolean): void => {
    const state = new ResponseState(res);
    const incoming = readRequest(req);
    if (!guard(state, incoming)) return;
    // Checked before the body is read (a stranger's upload is not taken in)...
    const first = admit(state, incoming, ownEndpoint);
    if (first === null) return;
    if (incoming.method === 'POST' && declaredTooLarge(state, incoming, options.mcpMaxBodyBytes)) return;
    void (async () => {
      const body = incoming.method === 'POST' ? await readBody(state, options.mcpMaxBodyBytes) : null;
      // ...and again once it is: a credential revoked or rebound while the body arrived found nothing of it open to close.
      const admitted = body === null ? first : admit(state, incoming, ownEndpoint);
      if (admitted === null) return;
      // No Fetch Request unless the SDK transport answers: the common POST is served from the headers and bytes as read.
      const head = { method: incoming.method, headers: incoming.headers, credential: admitted.credential, toolset: admitted.toolset, toRequest: () => toFetchRequest(incoming, `http://${LOOPBACK}:${port}`) };
      await mcp.serve(head, body, new UwsReply(state));
    })().catch((error: unknown) => {
      if (error instanceof BodyTooLargeError) return sendJson(state, envelope(413, 'PAYLOAD_TOO_LARGE', `request body over ${options.mcpMaxBodyBytes} bytes`));
      if (!state.aborted) log.error('mcp request failed', { error: String(error) });
      sendJson(state, envelope(500, 'INTERNAL', 'internal error in coffer; see the daemon log'));
    });
  };
  app.any('/mcp', (res, req) => serveMcp(res, req, false));
  app.any(`${TOOLSET_PATH}*`, (res, req) => serveMcp(res, req, true));

  app.any('/api/v1/*', (res: HttpResponse, req) => {
    const state = new ResponseState(res);
    const incoming = readRequest(req);
    if (!guard(state, incoming)) return;
    const head = { method: incoming.method, path: incoming.path.slice('/api/v1'.length), headers: incoming.headers };
    // Before the body is read: a client without the token (or going nowhere) uploads nothing.
    const admission = api.admit(head);
    if (!admission.ok) return sendJson(state, admission.answer);
    const limit = admission.maxBodyBytes ?? options.apiMaxBodyBytes;
    const hasBody = incoming.method !== 'GET' && incoming.method !== 'DELETE';
    if (hasBody && declaredTooLarge(state, incoming, limit)) return;
    void (async () => {
      const raw = hasBody ? await readBody(state, limit) : null;
      let body: unknown;
      if (raw !== null && raw.length > 0) {
        try {
          body = JSON.parse(raw.toString('utf8'));
        } catch {
          return sendJson(state, envelope(400, 'BAD_REQUEST', 'request body is not valid JSON'));
        }
      }
      sendJson(state, await api.handle({ ...head, query: new URLSearchParams(incoming.query), body }));
    })().catch((error: unknown) => {
      if (error instanceof BodyTooLargeError) return sendJson(state, envelope(413, 'PAYLOAD_TOO_LARGE', `request body over ${limit} bytes`));
      if (!state.aborted) log.error('api request failed', { path: incoming.path, error: String(error) });
      sendJson(state, envelope(500, 'INTERNAL', 'internal error in coffer; see the daemon log'));
    });
  });

  // The browser's return from an upstream's authorization server: no credential (the state parameter is the proof).
  app.get(OAUTH_CALLBACK_PATH, (res: HttpResponse, req) => {
    const state = new ResponseState(res);
    const incoming = readRequest(req);
    if (!guard(state, incoming) || !oauthCallback) return;
    oauthCallback(new URLSearchParams(incoming.query))
      .then((page) => sendBuffered(state, page.status, HTML_HEADERS, callbackHtml(page)))
      .catch((error: unknown) => {
        log.error('oauth callback failed', { error: String(error) });
        sendBuffered(state, 500, HTML_HEADERS, callbackHtml({ status: 500, ok: false, message: 'internal error in coffer; see the daemon log' }));
      });
  });

  const adminWs = registerAdminWs(app, { ...admin, port: () => port, log });
  registerOpsRoutes(app, ops, guard);

  const ui = UiAssets.load();
  app.any('/*', (res: HttpResponse, req) => {
    const state = new ResponseState(res);
    const incoming = readRequest(req);
    // The web UI's files; the Host check as for the API (a rebinding page must not frame or read it).
    if (ui.serves(incoming.method, incoming.path)) return void (guard(state, incoming) && ui.send(state, incoming));
    sendJson(state, envelope(404, 'RESOURCE_NOT_FOUND', 'not found: MCP clients use /mcp, management uses /api/v1, the web UI is at /'));
  });

  const socket = await listenInRange(app, options.port, options.port === 0 ? 1 : options.portRange);
  port = uws.us_socket_local_port(socket);
  return {
    port,
    admin: adminWs,
    close: () => {
      adminWs.close();
      uws.us_listen_socket_close(socket);
    },
  };
}

/** uSockets' listen option; its enum exists only in the typings, not at run time. */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** app.listen(host, port, options, cb): the form exists in the binding but not in its typings. */
function listenExclusive(app: TemplatedApp, host: string, port: number, done: (socket: us_listen_socket | false) => void): void {
  (app.listen as unknown as (host: string, port: number, options: number, cb: typeof done) => void)(host, port, LIBUS_LISTEN_EXCLUSIVE_PORT, done);
}

async function listenInRange(app: TemplatedApp, first: number, count: number): Promise<us_listen_socket> {
  for (let port = first; port < first + count; port++) {
    // Exclusive: uSockets otherwise sets SO_REUSEPORT, and a second daemon on a taken port would silently share it.
    const socket = await new Promise<us_listen_socket | false>((resolve) => listenExclusive(app, LOOPBACK, port, resolve));
    if (socket) return socket;
  }
  throw new PortTakenError(first, count, LOOPBACK);
}
