// The admin WebSocket (/admin/ws) protocol: every frame is one JSON text
// message. Shared by the server (src/admin/) and its clients (src/admin/client.ts,
// the CLI, the web UI). Pure types and constants: no Node imports.
//
// Connecting (loopback only; Host must be a loopback name with the daemon's
// port, Origin — when sent — a loopback page, else the upgrade gets 403):
//   - Node clients: `Authorization: Bearer <token>` on the upgrade request.
//   - Browsers (cannot set headers): offer the subprotocols
//     `coffer.v1` and `coffer.token.<token>`; the server echoes only `coffer.v1`.
//   A token in the URL query is never accepted. A missing or wrong token: the
//   socket opens and is closed at once with code 4401 and a reason.
//
// Client → server: commands with a client-chosen `id` (string, 1–128 chars),
// answered by exactly one `result` with that id (after zero or more `progress`).
// Server → client: `event` (every bus event, narrowed by `subscribe`),
// `progress`, `result`, `error` (a frame that could not be accepted; the socket
// stays usable) and `dropped` (events skipped while the client was not reading).
import type { ErrorBody } from './errors.js';
import type { CofferEvent, CofferEventType } from './events.js';

/** The one subprotocol the server ever echoes. */
export const ADMIN_SUBPROTOCOL = 'coffer.v1';
/** Prefix of the subprotocol that carries the token (browsers). */
export const ADMIN_TOKEN_SUBPROTOCOL_PREFIX = 'coffer.token.';
export const ADMIN_PATH = '/admin/ws';

/** Close codes the server uses. */
export const ADMIN_CLOSE = {
  /** Daemon shutting down. */
  GOING_AWAY: 1001,
  /** Too many bad frames. */
  POLICY_VIOLATION: 1008,
  /** The client stayed too slow (its send buffer stayed full). */
  TRY_AGAIN_LATER: 1013,
  /** Missing or wrong token, or the token was rotated. */
  UNAUTHENTICATED: 4401,
} as const;

/** Every CofferEvent type, for validation of `subscribe`. */
export const COFFER_EVENT_TYPES = ['health', 'list_changed', 'degraded', 'recovered', 'server', 'preference', 'words', 'audit', 'invocation', 'namespace_collision', 'config_file', 'toolset', 'client_bound'] as const satisfies readonly CofferEventType[];
// Compile-time guard: a new event type must be added above.
type MissingEventType = Exclude<CofferEventType, (typeof COFFER_EVENT_TYPES)[number]>;
const everyEventTypeListed: MissingEventType extends never ? true : false = true;
void everyEventTypeListed;

// ---- client → server ----

export interface RefreshCommand {
  type: 'refresh';
  id: string;
  /** Server name: drops its list cache and lists live (R3). */
  server: string;
}

export interface TestCommand {
  type: 'test';
  id: string;
  /** Server name: a temporary connection of its own (R9). */
  server: string;
}

export interface SubscribeCommand {
  type: 'subscribe';
  id: string;
  /** Event types to receive; absent or empty = all. Replaces the previous filter. */
  types?: CofferEventType[];
  /** Servers whose events to receive; absent or empty = all. Events not tied to one server pass. */
  servers?: string[];
}

export interface PingCommand {
  type: 'ping';
  id: string;
}

export type AdminCommand = RefreshCommand | TestCommand | SubscribeCommand | PingCommand;
export type AdminCommandType = AdminCommand['type'];
export const ADMIN_COMMAND_TYPES = ['refresh', 'test', 'subscribe', 'ping'] as const satisfies readonly AdminCommandType[];

// ---- server → client ----

export interface EventMessage {
  type: 'event';
  event: CofferEvent;
}

export interface ProgressMessage {
  type: 'progress';
  id: string;
  /** `started` once, then `waiting` every few seconds until the result. */
  stage: 'started' | 'waiting';
  message: string;
  elapsed_ms: number;
}

export type ResultMessage<D = unknown> = { type: 'result'; id: string; ok: true; data: D } | { type: 'result'; id: string; ok: false; error: ErrorBody };

export interface ErrorMessage {
  type: 'error';
  /** The id of the offending command, when it had a usable one. */
  id?: string;
  error: ErrorBody;
}

export interface DroppedMessage {
  type: 'dropped';
  /** Events not sent to this client because it was not reading fast enough. */
  count: number;
}

export type AdminServerMessage = EventMessage | ProgressMessage | ResultMessage | ErrorMessage | DroppedMessage;
