// per_session mode: one upstream connection per downstream client session,
// opened on the session's first call (declaring that client's sampling,
// elicitation and roots), closed with the session or once it has had no call
// in flight for a while. No backoff here: a failed open fails that call, the
// next call tries again.
import type { ClientRef } from '../../src/protocol/actor.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { Connection, type ConnectionHooks } from './connection.js';
import type { HttpAuth } from './http-auth.js';
import type { ActorLog } from './log.js';

/** A session's connection with no call in flight for this long is closed (reopened on its next call). */
const IDLE_MS = 10 * 60_000;

/** The client capabilities an upstream may rely on coffer to relay. */
const RELAYED_CAPABILITIES = ['sampling', 'elicitation', 'roots'];

/** Server messages of a session's connection, tagged with that session. */
export type SessionConnectionHooks = (session: string) => Pick<ConnectionHooks, 'onNotification' | 'onRequest'>;

/** A call's hold on its session's connection; release() once the call is over. */
export interface Lease {
  connection: Connection;
  release(): void;
}

interface Entry {
  opening: Promise<Connection>;
  connection: Connection | null;
  /** Calls holding the connection; the idle clock runs only at 0. */
  active: number;
  idleTimer: NodeJS.Timeout | undefined;
}

export class SessionConnections {
  private readonly entries = new Map<string, Entry>();
  /** logging/setLevel of sessions: applied when their connection opens (setting a level never opens one). */
  private readonly logLevels = new Map<string, unknown>();
  private stopped = false;

  constructor(
    private readonly config: ServerConfig,
    private readonly log: ActorLog,
    private readonly hooks: SessionConnectionHooks,
    private readonly auth: HttpAuth | null = null,
  ) {}

  /**
   * The session's open connection (opened now if needed) for one call, which
   * must release the lease; rejects when it cannot be opened within connect_ms.
   */
  async acquire(client: ClientRef): Promise<Lease> {
    if (this.stopped) throw new Error('the actor is shutting down');
    let entry = this.entries.get(client.session);
    if (!entry) {
      const created: Entry = { opening: this.open(client), connection: null, active: 0, idleTimer: undefined };
      this.entries.set(client.session, created);
      created.opening.then(
        (connection) => (created.connection = connection),
        () => this.forget(client.session, created),
      );
      entry = created;
    }
    const held = entry;
    held.active += 1;
    clearTimeout(held.idleTimer);
    try {
      return { connection: await held.opening, release: () => this.release(client.session, held) };
    } catch (error) {
      this.release(client.session, held);
      throw error;
    }
  }

  /** Bound to the entry it was leased from: a later entry of the same session is never counted down. */
  private release(session: string, entry: Entry): void {
    if (--entry.active > 0 || this.entries.get(session) !== entry) return;
    entry.idleTimer = setTimeout(() => this.entries.get(session) === entry && void this.close(session), IDLE_MS);
    entry.idleTimer.unref();
  }

  rememberLogLevel(session: string, level: unknown): void {
    this.logLevels.set(session, level);
  }

  /** The session's connection if it is open; never opens one. */
  current(session: string): Connection | null {
    return this.entries.get(session)?.connection ?? null;
  }

  async close(session: string): Promise<void> {
    this.logLevels.delete(session);
    const entry = this.entries.get(session);
    if (!entry) return;
    this.forget(session, entry);
    const connection = await entry.opening.catch(() => null);
    if (connection) {
      this.log.note(`closing the connection of client session ${session.slice(0, 8)}`);
      await connection.close();
    }
  }

  /** Closes every session's connection; with `stop`, nothing opens after this. */
  async closeAll(stop = true): Promise<void> {
    if (stop) this.stopped = true;
    await Promise.all([...this.entries.keys()].map((session) => this.close(session)));
  }

  private forget(session: string, entry: Entry): void {
    clearTimeout(entry.idleTimer);
    if (this.entries.get(session) === entry) this.entries.delete(session);
  }

  private async open(client: ClientRef): Promise<Connection> {
    const declared = Object.fromEntries(RELAYED_CAPABILITIES.filter((name) => client.capabilities[name] !== undefined).map((name) => [name, client.capabilities[name]]));
    const hooks = this.hooks(client.session);
    const connection = await Connection.create(
      this.config,
      this.log,
      {
        onLost: (reason) => {
          this.log.note(`connection of client session ${client.session.slice(0, 8)} lost: ${reason}`);
          const entry = this.entries.get(client.session);
          if (entry?.connection === connection) this.forget(client.session, entry);
        },
        onNotification: hooks.onNotification,
        onRequest: hooks.onRequest,
      },
      declared,
      this.auth,
    );
    await connection.connect();
    const level = this.logLevels.get(client.session);
    if (level !== undefined) {
      await connection.request('logging/setLevel', { level }, { timeoutMs: this.config.timeouts.request_ms }).catch((error: unknown) => this.log.note(`logging/setLevel on the new connection failed: ${String(error)}`));
    }
    // Shut down while it was connecting: nobody would close it.
    if (this.stopped) {
      await connection.close();
      throw new Error('the actor is shutting down');
    }
    this.log.note(`opened a connection for client session ${client.session.slice(0, 8)}`);
    return connection;
  }
}
