// The actor pool: one actor worker per enabled upstream. It starts and stops
// actors as servers come and go, keeps each actor's last reported status, and
// re-emits actor events for the router. An actor worker that dies is replaced.
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import type { ActorEvent, ActorStatus, ActorTuning, ForwardOutcome, ForwardRequest } from '../protocol/actor.js';
import type { ListKind } from '../protocol/capabilities.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { Logger } from '../log.js';
import { spawnActor, type ActorHandle } from './actor-handle.js';
import type { ListAnswer, Upstream, UpstreamDirectory } from './upstream.js';

export interface PoolEvents {
  state: [server: string, status: ActorStatus];
  list_changed: [server: string, kind: ListKind];
  progress: [server: string, requestId: string, progress: { progress: number; total?: number; message?: string }];
}

const RESPAWN_DELAY_MS = 1_000;

function initialStatus(server: string): ActorStatus {
  return { server, state: 'connecting', since: Date.now(), attempts: 0, lastError: null, serverInfo: null, protocolVersion: null, pid: null };
}

class PoolEntry implements Upstream {
  lastStatus: ActorStatus;
  handle: ActorHandle;
  stopped = false;

  constructor(
    readonly config: ServerConfig,
    private readonly spawn: (entry: PoolEntry) => ActorHandle,
  ) {
    this.lastStatus = initialStatus(config.name);
    this.handle = spawn(this);
  }

  get name(): string {
    return this.config.name;
  }

  respawn(): void {
    this.lastStatus = initialStatus(this.name);
    this.handle = this.spawn(this);
  }

  list(kind: ListKind, fresh: boolean): Promise<ListAnswer> {
    return this.handle.list(kind, fresh);
  }
  forward(req: ForwardRequest): Promise<ForwardOutcome> {
    return this.handle.forward(req);
  }
  cancel(id: string, reason: string): void {
    this.handle.cancel(id, reason);
  }
  dropCache(): void {
    this.handle.dropCache();
  }
  status(): ActorStatus {
    return this.lastStatus;
  }
}

export class UpstreamPool extends EventEmitter<PoolEvents> implements UpstreamDirectory {
  private entries = new Map<string, PoolEntry>();

  constructor(
    private readonly tuning: ActorTuning,
    private readonly logDir: string,
    private readonly log: Logger,
  ) {
    super();
  }

  /** Starts the server's actor (it connects in the background). */
  start(config: ServerConfig): void {
    if (this.entries.has(config.name)) return;
    this.entries.set(config.name, new PoolEntry(config, (entry) => this.spawn(entry)));
  }

  private spawn(entry: PoolEntry): ActorHandle {
    return spawnActor(
      { config: entry.config, logFile: join(this.logDir, `${entry.config.name}.log`), tuning: this.tuning },
      {
        onEvent: (event) => this.onEvent(entry, event),
        onExit: (reason) => {
          if (entry.stopped) return;
          this.log.error('actor worker died; replacing it', { server: entry.name, reason });
          setTimeout(() => entry.stopped || entry.respawn(), RESPAWN_DELAY_MS).unref();
        },
      },
    );
  }

  private onEvent(entry: PoolEntry, event: ActorEvent): void {
    switch (event.type) {
      case 'state':
        entry.lastStatus = event.status;
        this.emit('state', entry.name, event.status);
        break;
      case 'list_changed':
        this.emit('list_changed', entry.name, event.kind);
        break;
      case 'progress':
        this.emit('progress', entry.name, event.requestId, { progress: event.progress, total: event.total, message: event.message });
        break;
    }
  }

  async stop(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    entry.stopped = true;
    this.entries.delete(name);
    await entry.handle.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((name) => this.stop(name)));
  }

  active(): Upstream[] {
    return [...this.entries.values()];
  }

  get(name: string): Upstream | undefined {
    return this.entries.get(name);
  }

  status(name: string): ActorStatus | null {
    return this.entries.get(name)?.lastStatus ?? null;
  }

  statuses(): ActorStatus[] {
    return [...this.entries.values()].map((entry) => entry.lastStatus);
  }
}
