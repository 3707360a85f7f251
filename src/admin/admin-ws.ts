// The admin WebSocket /admin/ws on the daemon's uWebSockets.js app: live
// events from the bus and the commands refresh, test, subscribe, ping.
// Protocol: src/protocol/admin.ts. This module is the route: the socket
// registry and its lifecycle, wired to the modules that do the work —
// ws-auth (who may connect), ws-backpressure (sending without queueing),
// ws-frames (what a frame must be), ws-jobs (the commands), messages (parsing
// and event filters).
import type { TemplatedApp } from 'uWebSockets.js';
import type { EventBus } from '../daemon/event-bus.js';
import type { Logger } from '../log.js';
import { ADMIN_CLOSE, ADMIN_PATH } from '../protocol/admin.js';
import type { ErrorBody } from '../protocol/errors.js';
import { parseClientMessage } from './messages.js';
import { checkUpgrade, readUpgrade, refuse, TokenRotation, UNAUTHENTICATED_REASON } from './ws-auth.js';
import { Backpressure } from './ws-backpressure.js';
import { bufferedOf, endClient, newClient, type AdminClient } from './ws-client.js';
import { countBadFrame, frameProblem } from './ws-frames.js';
import { handleCommand, type JobContext } from './ws-jobs.js';
import { DEFAULT_ADMIN_WS_OPTIONS, type AdminWsOptions, type AdminWsStats } from './ws-options.js';

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

export interface AdminWs {
  /** Closes every admin socket with 1001 and refuses new upgrades (daemon shutdown). Idempotent. */
  close(): void;
  stats(): AdminWsStats;
}

export function registerAdminWs(app: TemplatedApp, deps: AdminDeps, overrides: Partial<AdminWsOptions> = {}): AdminWs {
  const options: AdminWsOptions = { ...DEFAULT_ADMIN_WS_OPTIONS, ...overrides };
  const clients = new Set<AdminClient>();
  const rotation = new TokenRotation(deps.token);
  const backpressure = new Backpressure(options, deps.log);
  let serial = 0;
  let closed = false;

  const authedCount = (): number => {
    let count = 0;
    for (const client of clients) if (client.authError === null) count++;
    return count;
  };

  const badFrame = (client: AdminClient, error: ErrorBody, id?: string): void => {
    const closeReason = countBadFrame(client, options);
    if (closeReason !== null) return endClient(client, ADMIN_CLOSE.POLICY_VIOLATION, closeReason);
    backpressure.sendControl(client, id === undefined ? { type: 'error', error } : { type: 'error', id, error });
  };

  const jobs: JobContext = {
    options,
    refresh: deps.refresh,
    test: deps.test,
    send: (client, message) => backpressure.sendControl(client, message),
    badFrame,
    log: deps.log,
  };

  const unsubscribe = deps.bus.subscribe((event) => {
    try {
      if (clients.size === 0) return;
      rotation.check(clients);
      backpressure.deliver(clients, event);
    } catch (error) {
      // Publishing never fails because of an admin client.
      deps.log.error('admin ws: event delivery failed', { error: String(error) });
    }
  });

  const sweep = setInterval(() => {
    rotation.check(clients);
    backpressure.sweep(clients);
  }, backpressure.sweepIntervalMs);
  sweep.unref();

  app.ws<AdminClient>(ADMIN_PATH, {
    compression: 0,
    maxPayloadLength: options.hardMaxMessageBytes,
    maxBackpressure: options.maxBackpressure,
    closeOnBackpressureLimit: 0,
    idleTimeout: options.idleTimeoutSec,
    sendPingsAutomatically: true,

    upgrade: (res, req, context) => {
      // Synchronous: every header is read here, nothing is awaited.
      const headers = readUpgrade(req);
      if (closed) return refuse(res, '503 Service Unavailable', 'DAEMON_NOT_READY', 'coffer is shutting down');
      const verdict = checkUpgrade(headers, deps.token(), deps.port());
      if (!verdict.ok) return refuse(res, verdict.status, verdict.code, verdict.message);
      if (verdict.authed && authedCount() >= options.maxClients) {
        return refuse(res, '503 Service Unavailable', 'DAEMON_NOT_READY', `too many admin connections (${options.maxClients})`);
      }
      const client = newClient(++serial, verdict.authed ? null : UNAUTHENTICATED_REASON, verdict.token);
      res.upgrade(client, headers.key, verdict.protocol, headers.extensions, context);
    },

    open: (ws) => {
      const client = ws.getUserData();
      client.ws = ws;
      client.open = true;
      clients.add(client);
      if (client.authError !== null) {
        deps.log.info('admin ws: refused a client', { client: client.serial, reason: 'token' });
        endClient(client, ADMIN_CLOSE.UNAUTHENTICATED, client.authError);
        return;
      }
      if (closed) endClient(client, ADMIN_CLOSE.GOING_AWAY, 'coffer daemon is shutting down');
      else deps.log.debug('admin ws: client connected', { client: client.serial });
    },

    message: (ws, message, isBinary) => {
      const client = ws.getUserData();
      if (!client.open || client.authError !== null) return;
      rotation.check(clients);
      if (!client.open) return;
      const problem = frameProblem(message.byteLength, isBinary, options.maxMessageBytes);
      if (problem !== null) return badFrame(client, problem);
      // Copied out before anything else: uWS neuters the buffer after this callback.
      const text = Buffer.from(message).toString('utf8');
      const parsed = parseClientMessage(text);
      if (!parsed.ok) return badFrame(client, parsed.error, parsed.id);
      handleCommand(jobs, client, parsed.command);
    },

    drain: (ws) => backpressure.drained(ws.getUserData(), ws.getBufferedAmount()),

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
      for (const client of [...clients]) endClient(client, ADMIN_CLOSE.GOING_AWAY, 'coffer daemon is shutting down');
    },
    stats() {
      let buffered = 0;
      for (const client of clients) buffered += bufferedOf(client) ?? 0;
      return { clients: authedCount(), dropped: backpressure.dropped, closed_slow: backpressure.closedSlow, buffered };
    },
  };
}
