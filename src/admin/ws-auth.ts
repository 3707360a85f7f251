// Who may open the admin socket. Host/Origin must be loopback names of this
// daemon (DNS rebinding) → else 403. The token comes from `Authorization:
// Bearer` or the subprotocol `coffer.token.<token>` (browsers cannot set
// headers on a WebSocket), never from the query; only `coffer.v1` is ever
// echoed back. A wrong or missing token is not refused here: the socket is
// upgraded and closed at once with 4401, because a browser cannot read the
// HTTP status of a refused upgrade but can read a close code.
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { bearerToken, tokenMatches } from '../http/bearer.js';
import { isAllowedHost, isAllowedOrigin } from '../http/host-check.js';
import { ADMIN_CLOSE, ADMIN_SUBPROTOCOL, ADMIN_TOKEN_SUBPROTOCOL_PREFIX } from '../protocol/admin.js';
import { endClient, type AdminClient } from './ws-client.js';

export const UNAUTHENTICATED_REASON = "missing or wrong token: send 'Authorization: Bearer <token>' (daemon.json)";
const ROTATED_REASON = 'the token was rotated: reconnect with the new token from daemon.json';

/** The headers of an upgrade, copied out at once: uWS's request is only valid synchronously. */
export interface UpgradeHeaders {
  host: string;
  origin: string;
  authorization: string;
  key: string;
  protocol: string;
  extensions: string;
}

export function readUpgrade(req: HttpRequest): UpgradeHeaders {
  return {
    host: req.getHeader('host'),
    origin: req.getHeader('origin'),
    authorization: req.getHeader('authorization'),
    key: req.getHeader('sec-websocket-key'),
    protocol: req.getHeader('sec-websocket-protocol'),
    extensions: req.getHeader('sec-websocket-extensions'),
  };
}

export type UpgradeVerdict =
  | { ok: false; status: string; code: string; message: string }
  /** token: the one presented, when it matched; protocol: the subprotocol to echo ('' for none). */
  | { ok: true; authed: boolean; token: string | null; protocol: string };

export function checkUpgrade(headers: UpgradeHeaders, expectedToken: string, port: number): UpgradeVerdict {
  if (!isAllowedHost(headers.host, port) || !isAllowedOrigin(headers.origin)) {
    return { ok: false, status: '403 Forbidden', code: 'FORBIDDEN_HOST', message: 'Host or Origin is not a loopback name of this daemon (DNS-rebinding protection)' };
  }
  const offered = headers.protocol
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);
  const fromProtocol = offered.find((entry) => entry.startsWith(ADMIN_TOKEN_SUBPROTOCOL_PREFIX))?.slice(ADMIN_TOKEN_SUBPROTOCOL_PREFIX.length);
  const presented = bearerToken(headers.authorization) ?? fromProtocol;
  const authed = tokenMatches(presented, expectedToken);
  // Only the fixed protocol name is echoed, and only when offered; never the token.
  return { ok: true, authed, token: authed ? presented! : null, protocol: offered.includes(ADMIN_SUBPROTOCOL) ? ADMIN_SUBPROTOCOL : '' };
}

export function refuse(res: HttpResponse, status: string, code: string, message: string): void {
  res.cork(() => {
    res.writeStatus(status).writeHeader('content-type', 'application/json').end(JSON.stringify({ error: { code, message } }));
  });
}

/**
 * Notices a token rotation (the daemon's token is read, not pushed) and closes
 * every socket opened with the old token. Checked on every event, frame and
 * sweep, so a rotation takes effect without a timer of its own.
 */
export class TokenRotation {
  private known: string;

  constructor(private readonly token: () => string) {
    this.known = token();
  }

  check(clients: Iterable<AdminClient>): void {
    const current = this.token();
    if (current === this.known) return;
    this.known = current;
    for (const client of clients) {
      if (client.authError === null && !tokenMatches(client.token ?? undefined, current)) endClient(client, ADMIN_CLOSE.UNAUTHENTICATED, ROTATED_REASON);
    }
  }
}
