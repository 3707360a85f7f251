// The admin WebSocket's limits and counters: shared by the route and the
// modules it delegates to, so each of them takes only the fields it needs.

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
