// per_session mode: one upstream connection per downstream client session,
// opened on the session's first call (declaring that client's sampling,
// elicitation and roots), closed with the session or after it idles. No
// backoff here: a failed open fails that call, the next call tries again.
import type { ClientRef } from '../../src/protocol/actor.js';
import type { ServerConfig } from '../../src/protocol/server-config.js';
import { Connection, type ConnectionHooks } from './connection.js';
import type { ActorLog } from './log.js';

/** A session's connection with no call for this long is closed (reopened on its next call). */
export const SESSION_CONNECTION_IDLE_MS = 10 * 60_000;

/** The client capabilities an upstream may rely on coffer to relay. */
const RELAYED_CAPABILITIES = ['sampling', 'elicitation', 'roots'];

/** Server messages of a session's connection, tagged with that session. */
export type SessionConnectionHooks = (session: string) => Pick<ConnectionHooks, 'onNotification' | 'onRequest'>;

interface Entry {
  opening: Promise<Connection>;
  connection: Connection | null;
  idleTimer: NodeJS.Timeout | undefined;
}

export class SessionConnections {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly config: ServerConfig,
    private readonly log: ActorLog,
    private readonly hooks: SessionConnectionHooks,
    private readonly idleMs = SESSION_CONNECTION_IDLE_MS,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The session's open connection (opened now if needed); rejects when it cannot be opened within connect_ms. */
  async get(client: ClientRef): Promise<Connection> {
    let entry = this.entries.get(client.session);
    if (!entry) {
      const created: Entry = { opening: this.open(client), connection: null, idleTimer: undefined };
      this.entries.set(client.session, created);
      created.opening.then(
        (connection) => (created.connection = connection),
        () => this.entries.get(client.session) === created && this.entries.delete(client.session),
      );
      entry = created;
    }
    this.touch(client.session, entry);
    return entry.opening;
  }

  /** The session's connection if it is open; never opens one. */
  current(session: string): Connection | null {
    return this.entries.get(session)?.connection ?? null;
  }

  async close(session: string): Promise<void> {
    const entry = this.entries.get(session);
    if (!entry) return;
    this.entries.delete(session);
    clearTimeout(entry.idleTimer);
    const connection = await entry.opening.catch(() => null);
    if (connection) {
      this.log.note(`closing the connection of client session ${session.slice(0, 8)}`);
      await connection.close();
    }
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((session) => this.close(session)));
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
          if (entry?.connection === connection) {
            clearTimeout(entry.idleTimer);
            this.entries.delete(client.session);
          }
        },
        onNotification: hooks.onNotification,
        onRequest: hooks.onRequest,
      },
      declared,
    );
    await connection.connect();
    this.log.note(`opened a connection for client session ${client.session.slice(0, 8)}`);
    return connection;
  }

  private touch(session: string, entry: Entry): void {
    clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => void this.close(session), this.idleMs);
    entry.idleTimer.unref();
  }
}
