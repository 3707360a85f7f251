// The admin WebSocket /admin/ws on the daemon's uWebSockets.js app: live
// events from the bus and the commands refresh, test, subscribe, ping.
// Protocol: src/protocol/admin.ts. Parsing and filtering: ./messages.ts.
//
// Upgrade: Host/Origin must be loopback (DNS rebinding) → else 403. Token in
// `Authorization: Bearer` or the subprotocol `coffer.token.<token>` (only
// `coffer.v1` is ever echoed); never from the query. A wrong or missing token
// still upgrades and is closed at once with 4401 + reason (a browser cannot
// read an HTTP status of a refused upgrade, it can read a close code). The
// upgrade is synchronous: everything is read from the request up front.
//
// Backpressure: nothing is queued in JS. An event is sent only while the
// client's uWS send buffer is under `eventBufferLimit`; otherwise it is counted
// as dropped, and one {type:'dropped', count} is sent when the buffer drains.
// A client over the limit for `stallTimeoutMs` is closed with 1013. Results and
// progress may use the room between that limit and uWS's `maxBackpressure`.
import { bearerToken, tokenMatches } from '../http/bearer.js';
import type { EventBus } from '../daemon/event-bus.js';
import { isAllowedHost, isAllowedOrigin } from '../http/host-check.js';
import type { Logger } from '../log.js';
import { ADMIN_CLOSE, ADMIN_PATH, ADMIN_SUBPROTOCOL, ADMIN_TOKEN_SUBPROTOCOL_PREFIX, type AdminCommand, type AdminServerMessage } from '../protocol/admin.js';
import { CofferError, type ErrorBody } from '../protocol/errors.js';
import type { CofferEvent } from '../protocol/events.js';
import type { HttpResponse, TemplatedApp, WebSocket } from 'uWebSockets.js';
import { EventFilter, parseClientMessage } from './messages.js';

export interface AdminDeps {
  bus: EventBus;
  /** The current token (read on every upgrade; a rotation closes sockets opened with the old one). */
  token(): string;
  /** The daemon's listening port, for the Host check. */
  port(): number;
  /** Drop the server's list cache and list live: CapabilityService.view(server, true). Rejects with a CofferError. */
  refresh(server: string): Promise<unknown>;
  /** Test connection (R9): the report of ConnectionTester.test(config); rejects with a CofferError (e.g. RESOURCE_NOT_FOUND). */
  test(server: string): Promise<unknown>;
  log: Logger;
}

export interface AdminWsOptions {
  /** Events are dropped for a client whose uWS send buffer is over this. Default 1 MiB. */
  eventBufferLimit: number;
  /** uWS maxBackpressure: sends beyond it are refused by uWS (results then close the socket). Default 4 MiB. */
  maxBackpressure: number;
  /** Frames over this get a BAD_REQUEST error; the socket stays usable. Default 64 KiB. */
  maxMessageBytes: number;
  /** uWS maxPayloadLength: uWS drops a connection that sends a frame over this (the client sees 1006). Default 256 KiB. */
  hardMaxMessageBytes: number;
  /** A client over eventBufferLimit this long is closed with 1013. Default 30 s. */
  stallTimeoutMs: number;
  /** How often a pending refresh/test sends a `waiting` progress. Default 2 s. */
  progressIntervalMs: number;
  /** Commands in flight per socket. Default 16. */
  maxInFlight: number;
  /** More bad frames than this within badFrameWindowMs closes the socket (1008). Default 20 per 10 s. */
  badFrameLimit: number;
  badFrameWindowMs: number;
  /** Authenticated admin sockets at once; more get 503 on upgrade. Default 64. */
  maxClients: number;
  /** uWS idleTimeout in seconds (pings are sent automatically). Default 120. */
  idleTimeoutSec: number;
}

export const DEFAULT_ADMIN_WS_OPTIONS: AdminWsOptions = {
  eventBufferLimit: 1024 * 1024,
  maxBackpressure: 4 * 1024 * 1024,
  maxMessageBytes: 64 * 1024,
  hardMaxMessageBytes: 256 * 1024,
  stallTimeoutMs: 30_000,
  progressIntervalMs: 2_000,
  maxInFlight: 16,
  badFrameLimit: 20,
  badFrameWindowMs: 10_000,
  maxClients: 64,
  idleTimeoutSec: 120,
};

export interface AdminWsStats {
  /** Authenticated sockets open now. */
  clients: number;
  /** Events dropped for slow clients since start. */
  dropped: number;
  /** Sockets closed with 1013 for staying too slow. */
  closed_slow: number;
  /** Sum of the uWS send buffers of the open sockets, bytes. */
  buffered: number;
}

export interface AdminWs {
  /** Closes every admin socket with 1001 and refuses new upgrades (daemon shutdown). Idempotent. */
  close(): void;
  stats(): AdminWsStats;
}

interface Client {
  serial: number;
  /** null once authenticated; else the reason of the 4401 close. */
  authError: string | null;
  token: string | null;
  ws: WebSocket<Client> | null;
  open: boolean;
  filter: EventFilter;
  /** Events dropped and not yet reported with {type:'dropped'}. */
  dropped: number;
  /** When the client first went over the event buffer limit; null while under. */
  overSince: number | null;
  inFlight: Set<string>;
  badFrames: number;
  badWindowStart: number;
}

const UNAUTHENTICATED_REASON = "missing or wrong token: send 'Authorization: Bearer <token>' (daemon.json)";
const ROTATED_REASON = 'the token was rotated: reconnect with the new token from daemon.json';

function refuse(res: HttpResponse, status: string, code: string, message: string): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify({ error: { code, message } }));
  });
}

function errorBodyOf(error: unknown): ErrorBody | null {
  if (error instanceof CofferError) return error.toBody();
  // A CofferError that crossed a boundary as plain data.
  const candidate = error as { code?: unknown; message?: unknown; details?: unknown } | null;
  if (candidate && typeof candidate === 'object' && typeof candidate.code === 'string' && typeof candidate.message === 'string' && /^[A-Z_]+$/.test(candidate.code)) {
    return candidate.details === undefined
      ? { code: candidate.code as ErrorBody['code'], message: candidate.message }
      : { code: candidate.code as ErrorBody['code'], message: candidate.message, details: candidate.details };
  }
  return null;
}

export function registerAdminWs(app: TemplatedApp, deps: AdminDeps, overrides: Partial<AdminWsOptions> = {}): AdminWs {
  const options: AdminWsOptions = { ...DEFAULT_ADMIN_WS_OPTIONS, ...overrides };
  const clients = new Set<Client>();
  let serial = 0;
  let closed = false;
  let totalDropped = 0;
  let closedSlow = 0;
  let knownToken = deps.token();

  const authedCount = (): number => {
    let count = 0;
    for (const client of clients) if (client.authError === null) count++;
    return count;
  };

  /** Ends a socket from our side; the close handler does the bookkeeping. */
  const end = (client: Client, code: number, reason: string): void => {
    if (!client.open || !client.ws) return;
    try {
      client.ws.end(code, reason);
    } catch {
      client.open = false;
    }
  };

  /** Sends one frame now; false if the socket is gone or uWS refused it (over maxBackpressure). */
  const sendRaw = (client: Client, text: string): boolean => {
    if (!client.open || !client.ws) return false;
    const ws = client.ws;
    let status = 0;
    try {
      ws.cork(() => {
        status = ws.send(text, false, false);
      });
    } catch {
      client.open = false;
      return false;
    }
    return status !== 2;
  };

  /** Results, progress, errors: never dropped silently; a client too stuck to take one is closed. */
  const sendControl = (client: Client, message: AdminServerMessage): void => {
    if (!client.open) return;
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch (error) {
      deps.log.error('admin ws: cannot serialise a message', { type: message.type, error: String(error) });
      if (message.type !== 'result') return;
      text = JSON.stringify({ type: 'result', id: message.id, ok: false, error: { code: 'INTERNAL', message: 'internal error in coffer; see the daemon log' } });
    }
    if (!sendRaw(client, text)) {
      deps.log.warn('admin ws: client send buffer full, closing', { client: client.serial, type: message.type });
      end(client, ADMIN_CLOSE.TRY_AGAIN_LATER, 'send buffer full: the client is not reading');
    }
  };

  const flushDropped = (client: Client): void => {
    if (client.dropped === 0 || !client.ws) return;
    const count = client.dropped;
    client.dropped = 0;
    client.overSince = null;
    sendControl(client, { type: 'dropped', count });
  };

  /** After a rotation every socket opened with the old token is closed. */
  const checkToken = (): void => {
    const current = deps.token();
    if (current === knownToken) return;
    knownToken = current;
    for (const client of clients) {
      if (client.authError === null && !tokenMatches(client.token ?? undefined, current)) end(client, ADMIN_CLOSE.UNAUTHENTICATED, ROTATED_REASON);
    }
  };

  const deliver = (event: CofferEvent): void => {
    if (clients.size === 0) return;
    checkToken();
    let text: string | null = null;
    for (const client of clients) {
      if (!client.open || client.authError !== null || !client.ws || !client.filter.matches(event)) continue;
      let buffered: number;
      try {
        buffered = client.ws.getBufferedAmount();
      } catch {
        continue;
      }
      if (buffered > options.eventBufferLimit) {
        client.dropped++;
        totalDropped++;
        client.overSince ??= Date.now();
        continue;
      }
      if (client.dropped > 0) flushDropped(client);
      text ??= JSON.stringify({ type: 'event', event } satisfies AdminServerMessage);
      if (!sendRaw(client, text)) {
        client.dropped++;
        totalDropped++;
        client.overSince ??= Date.now();
      }
    }
  };

  const unsubscribe = deps.bus.subscribe((event) => {
    try {
      deliver(event);
    } catch (error) {
      // Publishing never fails because of an admin client.
      deps.log.error('admin ws: event delivery failed', { error: String(error) });
    }
  });

  const sweep = setInterval(
    () => {
      checkToken();
      const now = Date.now();
      for (const client of clients) {
        if (!client.open || !client.ws || client.overSince === null) continue;
        let buffered = 0;
        try {
          buffered = client.ws.getBufferedAmount();
        } catch {
          continue;
        }
        if (buffered <= options.eventBufferLimit) {
          flushDropped(client);
        } else if (now - client.overSince >= options.stallTimeoutMs) {
          closedSlow++;
          deps.log.warn('admin ws: closing a client that stopped reading', { client: client.serial, dropped: client.dropped, buffered });
          end(client, ADMIN_CLOSE.TRY_AGAIN_LATER, `too slow: events were dropped for ${Math.round(options.stallTimeoutMs / 1000)} s`);
        }
      }
    },
    Math.max(10, Math.min(1_000, Math.floor(options.stallTimeoutMs / 4))),
  );
  sweep.unref();

  const badFrame = (client: Client, error: ErrorBody, id?: string): void => {
    const now = Date.now();
    if (now - client.badWindowStart > options.badFrameWindowMs) {
      client.badWindowStart = now;
      client.badFrames = 0;
    }
    client.badFrames++;
    if (client.badFrames > options.badFrameLimit) {
      end(client, ADMIN_CLOSE.POLICY_VIOLATION, `too many bad frames (${options.badFrameLimit} per ${Math.round(options.badFrameWindowMs / 1000)} s)`);
      return;
    }
    sendControl(client, id === undefined ? { type: 'error', error } : { type: 'error', id, error });
  };

  const runJob = async (client: Client, id: string, label: string, startMessage: string, job: () => Promise<unknown>): Promise<void> => {
    const started = Date.now();
    sendControl(client, { type: 'progress', id, stage: 'started', message: startMessage, elapsed_ms: 0 });
    const ticker = setInterval(() => {
      const elapsed = Date.now() - started;
      sendControl(client, { type: 'progress', id, stage: 'waiting', message: `${label}: still waiting (${Math.round(elapsed / 1000)} s)…`, elapsed_ms: elapsed });
    }, options.progressIntervalMs);
    try {
      const data = await job();
      sendControl(client, { type: 'result', id, ok: true, data });
    } catch (error) {
      let body = errorBodyOf(error);
      if (body === null) {
        deps.log.error('admin ws: command failed', { client: client.serial, label, error: String(error) });
        body = { code: 'INTERNAL', message: 'internal error in coffer; see the daemon log' };
      }
      sendControl(client, { type: 'result', id, ok: false, error: body });
    } finally {
      clearInterval(ticker);
      client.inFlight.delete(id);
    }
  };

  const handle = (client: Client, command: AdminCommand): void => {
    switch (command.type) {
      case 'ping':
        return sendControl(client, { type: 'result', id: command.id, ok: true, data: { pong: true, at: new Date().toISOString() } });
      case 'subscribe':
        return sendControl(client, { type: 'result', id: command.id, ok: true, data: client.filter.set(command.types, command.servers) });
      case 'refresh':
      case 'test': {
        if (client.inFlight.has(command.id)) return badFrame(client, { code: 'BAD_REQUEST', message: `a command with id '${command.id}' is still running: use a new id` }, command.id);
        if (client.inFlight.size >= options.maxInFlight) {
          return badFrame(client, { code: 'BAD_REQUEST', message: `more than ${options.maxInFlight} commands in flight: wait for a result` }, command.id);
        }
        client.inFlight.add(command.id);
        const server = command.server;
        if (command.type === 'refresh') {
          void runJob(client, command.id, `refresh '${server}'`, `refreshing '${server}': dropping its cache and listing tools, resources and prompts…`, () => deps.refresh(server));
        } else {
          void runJob(client, command.id, `test '${server}'`, `testing '${server}': opening a temporary connection…`, () => deps.test(server));
        }
        return;
      }
    }
  };

  app.ws<Client>(ADMIN_PATH, {
    compression: 0,
    maxPayloadLength: options.hardMaxMessageBytes,
    maxBackpressure: options.maxBackpressure,
    closeOnBackpressureLimit: 0,
    idleTimeout: options.idleTimeoutSec,
    sendPingsAutomatically: true,

    upgrade: (res, req, context) => {
      // Synchronous: every header is read here, nothing is awaited.
      const host = req.getHeader('host');
      const origin = req.getHeader('origin');
      const authorization = req.getHeader('authorization');
      const key = req.getHeader('sec-websocket-key');
      const protocolHeader = req.getHeader('sec-websocket-protocol');
      const extensions = req.getHeader('sec-websocket-extensions');
      if (closed) return refuse(res, '503 Service Unavailable', 'DAEMON_NOT_READY', 'coffer is shutting down');
      if (!isAllowedHost(host, deps.port()) || !isAllowedOrigin(origin)) {
        return refuse(res, '403 Forbidden', 'FORBIDDEN_HOST', 'Host or Origin is not a loopback name of this daemon (DNS-rebinding protection)');
      }
      const offered = protocolHeader
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0);
      const fromProtocol = offered.find((entry) => entry.startsWith(ADMIN_TOKEN_SUBPROTOCOL_PREFIX))?.slice(ADMIN_TOKEN_SUBPROTOCOL_PREFIX.length);
      const presented = bearerToken(authorization) ?? fromProtocol;
      const authed = tokenMatches(presented, deps.token());
      if (authed && authedCount() >= options.maxClients) {
        return refuse(res, '503 Service Unavailable', 'DAEMON_NOT_READY', `too many admin connections (${options.maxClients})`);
      }
      const client: Client = {
        serial: ++serial,
        authError: authed ? null : UNAUTHENTICATED_REASON,
        token: authed ? presented! : null,
        ws: null,
        open: false,
        filter: new EventFilter(),
        dropped: 0,
        overSince: null,
        inFlight: new Set(),
        badFrames: 0,
        badWindowStart: 0,
      };
      // Only the fixed protocol name is echoed, and only when offered; never the token.
      res.upgrade(client, key, offered.includes(ADMIN_SUBPROTOCOL) ? ADMIN_SUBPROTOCOL : '', extensions, context);
    },

    open: (ws) => {
      const client = ws.getUserData();
      client.ws = ws;
      client.open = true;
      clients.add(client);
      if (client.authError !== null) {
        deps.log.info('admin ws: refused a client', { client: client.serial, reason: 'token' });
        end(client, ADMIN_CLOSE.UNAUTHENTICATED, client.authError);
        return;
      }
      if (closed) end(client, ADMIN_CLOSE.GOING_AWAY, 'coffer daemon is shutting down');
      else deps.log.debug('admin ws: client connected', { client: client.serial });
    },

    message: (ws, message, isBinary) => {
      const client = ws.getUserData();
      if (!client.open || client.authError !== null) return;
      checkToken();
      if (!client.open) return;
      if (isBinary) return badFrame(client, { code: 'BAD_REQUEST', message: 'binary frames are not accepted: send JSON text frames' });
      if (message.byteLength > options.maxMessageBytes) {
        return badFrame(client, { code: 'BAD_REQUEST', message: `frame of ${message.byteLength} bytes is over the ${options.maxMessageBytes}-byte limit` });
      }
      // Copied out before anything else: uWS neuters the buffer after this callback.
      const text = Buffer.from(message).toString('utf8');
      const parsed = parseClientMessage(text);
      if (!parsed.ok) return badFrame(client, parsed.error, parsed.id);
      handle(client, parsed.command);
    },

    drain: (ws) => {
      const client = ws.getUserData();
      if (client.dropped > 0 && ws.getBufferedAmount() <= options.eventBufferLimit) flushDropped(client);
      else if (client.dropped === 0 && ws.getBufferedAmount() <= options.eventBufferLimit) client.overSince = null;
    },

    close: (ws, code) => {
      const client = ws.getUserData();
      client.open = false;
      client.ws = null;
      clients.delete(client);
      if (client.authError === null) deps.log.debug('admin ws: client disconnected', { client: client.serial, code, dropped: client.dropped });
    },
  });

  return {
    close() {
      if (closed) return;
      closed = true;
      unsubscribe();
      clearInterval(sweep);
      for (const client of [...clients]) end(client, ADMIN_CLOSE.GOING_AWAY, 'coffer daemon is shutting down');
    },
    stats() {
      let buffered = 0;
      for (const client of clients) {
        try {
          if (client.open && client.ws) buffered += client.ws.getBufferedAmount();
        } catch {
          // closed meanwhile
        }
      }
      return { clients: authedCount(), dropped: totalDropped, closed_slow: closedSlow, buffered };
    },
  };
}
