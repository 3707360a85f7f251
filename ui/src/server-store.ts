// Every registered server with its health, kept current from the admin
// WebSocket: health, degraded and recovered events patch it in place; a
// server added, changed or removed reloads the list (its config changed), and
// so does one that connected (what it negotiated).
import type { Api } from './api.js';
import type { LiveEvents } from './live.js';
import type { CofferEvent, ServerView } from './types.js';

const RELOAD_DEBOUNCE_MS = 150;

export class ServerStore {
  private servers = new Map<string, ServerView>();
  /** Kinds each server is left out of, from degraded/recovered events. */
  private readonly degradedKinds = new Map<string, Set<string>>();
  private readonly listeners = new Set<() => void>();
  private reloadTimer: ReturnType<typeof setTimeout> | undefined;
  private reloadSeq = 0;
  private latestReload: Promise<void> = Promise.resolve();
  loaded = false;
  loadError: Error | null = null;

  constructor(
    private readonly api: Api,
    live: LiveEvents,
  ) {
    live.onEvent((event) => this.apply(event));
    // Events missed while the socket was down: read the whole list again.
    live.onState((state) => state === 'live' && this.loaded && this.scheduleReload());
  }

  all(): ServerView[] {
    return [...this.servers.values()];
  }

  get(name: string): ServerView | undefined {
    return this.servers.get(name);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Reads the list again. Answers land in any order: only the last reload
   * started applies its answer, and an earlier one resolves when that one has
   * landed (so a caller that awaits it sees the list at least as new as its change).
   */
  reload(): Promise<void> {
    // A change made here reloads once it is answered; the live 'server' event of that same change has
    // scheduled a reload already, and this one read covers both.
    clearTimeout(this.reloadTimer);
    const seq = ++this.reloadSeq;
    const done = this.api.get<{ servers: ServerView[] }>('/servers').then(
      ({ servers }) => (seq === this.reloadSeq ? this.settle(servers, null) : this.latestReload),
      (error: Error) => (seq === this.reloadSeq ? this.settle(null, error) : this.latestReload),
    );
    this.latestReload = done;
    return done;
  }

  private settle(servers: ServerView[] | null, error: Error | null): void {
    if (servers) {
      this.servers = new Map(servers.map((server) => [server.name, server]));
      // The API's degraded flag is the truth again from here.
      this.degradedKinds.clear();
    }
    this.loadError = error;
    this.loaded = true;
    this.changed();
  }

  private scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => void this.reload(), RELOAD_DEBOUNCE_MS);
  }

  private apply(event: CofferEvent): void {
    switch (event.type) {
      case 'health': {
        const server = this.servers.get(event.server);
        if (!server) return;
        // Ready is a new connection: what it negotiated (protocol version, era) is read from the list; no other state has one.
        const connected = event.state === 'ready';
        server.health = { ...server.health, state: event.state, last_error: event.last_error, since: event.at, ...(connected ? {} : { protocol_version: null, era: null }) };
        if (connected) this.scheduleReload();
        return this.changed();
      }
      case 'degraded':
      case 'recovered': {
        const kinds = this.degradedKinds.get(event.server) ?? new Set<string>();
        if (event.type === 'degraded') kinds.add(event.kind);
        else kinds.delete(event.kind);
        this.degradedKinds.set(event.server, kinds);
        const server = this.servers.get(event.server);
        if (!server) return;
        server.health = { ...server.health, degraded: kinds.size > 0 };
        return this.changed();
      }
      case 'server':
        return this.scheduleReload();
      default:
        return;
    }
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
