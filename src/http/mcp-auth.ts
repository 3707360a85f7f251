// Who may use /mcp: a request presents `Authorization: Bearer <token>`, either
// the token of a named client (kept as its SHA-256 in the database; this holds
// the hashes in memory, so a check is one hash and one map lookup) or the
// daemon's own token from daemon.json (what `coffer shim` sends). With the
// documented opt-out ('none') every request is let in.
import { createHash } from 'node:crypto';
import type { ClientCredential } from '../protocol/db.js';
import { bearerToken, tokenMatches } from './bearer.js';

export type McpAuthMode = 'token' | 'none';

/** What a session is bound to: requests on it must present the same credential. */
export interface McpCredential {
  /** Stable for one credential; another credential never has the same id. */
  id: string;
  /** For logs: the client's name, 'daemon' or 'anonymous'. Never the token. */
  name: string;
  /** The toolset a client is bound to: it sees that set only, on every endpoint. */
  toolset?: string | null;
}

const DAEMON: McpCredential = { id: 'daemon', name: 'daemon' };
/** What the sessions and listens opened with the daemon's token are bound to (one id for every token it has had). */
export const DAEMON_CREDENTIAL_ID = DAEMON.id;
const ANONYMOUS: McpCredential = { id: 'anonymous', name: 'anonymous' };

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export class McpAuth {
  /** Token hash → its client. */
  private readonly clients = new Map<string, McpCredential>();

  constructor(
    readonly mode: McpAuthMode,
    private readonly daemonToken: () => string,
  ) {}

  /** Replaces the known clients (at start, from the database). */
  load(clients: readonly ClientCredential[]): void {
    this.clients.clear();
    for (const client of clients) this.added(client);
  }

  added(client: ClientCredential): void {
    this.clients.set(client.token_hash, { id: `client:${client.token_hash}`, name: client.name, toolset: client.toolset });
  }

  /** The client's binding changed: its credential id, whose sessions (opened on the old view) the caller closes. */
  rebound(client: ClientCredential): string {
    this.added(client);
    return `client:${client.token_hash}`;
  }

  /** The revoked client's credential id (its sessions are closed by the caller), or null if none had that name. */
  revoked(name: string): string | null {
    for (const [hash, client] of this.clients) {
      if (client.name !== name) continue;
      this.clients.delete(hash);
      return client.id;
    }
    return null;
  }

  /**
   * The credential of a request's Authorization header, or null: refuse it.
   * A client token is found by its hash: a lookup that takes longer for a
   * closer guess would tell an attacker about the hash of the guess, not about
   * any token (that would take a SHA-256 preimage). The daemon's token is
   * compared in constant time.
   */
  authenticate(authorization: string | undefined): McpCredential | null {
    const token = bearerToken(authorization);
    if (token !== undefined) {
      const client = this.clients.get(hashToken(token));
      if (client !== undefined) return client;
      if (tokenMatches(token, this.daemonToken())) return DAEMON;
    }
    return this.mode === 'none' ? ANONYMOUS : null;
  }
}
