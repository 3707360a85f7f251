// One admin socket's state, and the two ways anything talks to it: a frame
// sent now, or the socket ended from our side. uWS throws on a socket that
// closed meanwhile; both turn that into "gone" instead of an exception.
import type { WebSocket } from 'uWebSockets.js';
import { EventFilter } from './messages.js';

export interface AdminClient {
  serial: number;
  /** null once authenticated; else the reason of the 4401 close. */
  authError: string | null;
  token: string | null;
  ws: WebSocket<AdminClient> | null;
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

export function newClient(serial: number, authError: string | null, token: string | null): AdminClient {
  return {
    serial,
    authError,
    token,
    ws: null,
    open: false,
    filter: new EventFilter(),
    dropped: 0,
    overSince: null,
    inFlight: new Set(),
    badFrames: 0,
    badWindowStart: 0,
  };
}

/** Ends a socket from our side; the route's close handler does the bookkeeping. */
export function endClient(client: AdminClient, code: number, reason: string): void {
  if (!client.open || !client.ws) return;
  try {
    client.ws.end(code, reason);
  } catch {
    client.open = false;
  }
}

/** Sends one frame now; false if the socket is gone or uWS refused it (over maxBackpressure). */
export function sendRaw(client: AdminClient, text: string): boolean {
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
}

/** The socket's uWS send buffer in bytes; null if it closed meanwhile. */
export function bufferedOf(client: AdminClient): number | null {
  if (!client.open || !client.ws) return null;
  try {
    return client.ws.getBufferedAmount();
  } catch {
    return null;
  }
}
