// The actor pool: one actor worker per enabled upstream. It starts and stops
// actors as servers come and go (a few booting at a time), keeps each actor's
// last reported status, and re-emits actor events for the router. An actor
// worker that dies is replaced.
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { ActorCommand, ActorEvent, ActorStatus, ActorTuning, ForwardOutcome, ForwardRequest } from '../protocol/actor.js';
import type { ListKind } from '../protocol/capabilities.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { Logger } from '../log.js';
import { spawnActor, unavailableForward, unavailableList, type ActorHandle } from './actor-handle.js';
import { BootSlots } from './boot-slots.js';
import type { ListAnswer, Upstream, UpstreamDirectory } from './upstream.js';

export interface PoolEvents {
  state: [server: string, status: ActorStatus];
  list_changed: [server: string, kind: ListKind];
  progress: [server: string, requestId: string, progress: { progress: number; total?: number; message?: string }];
  /** The upstream's requests and notifications for clients. */
  client: [event: Extract<ActorEvent, { type: 'client_request' | 'client_request_cancelled' | 'notification' }>];
}

const RESPAWN_DELAY_MS = 1_000;
/** Workers booting at once: two per core keeps the cores busy while a boot waits on file reads. */
const DEFAULT_CONCURRENT_BOOTS = 2 * availableParallelism();
const NOT_STARTED = 'actor stopped before it started';

function initialStatus(server: string): ActorStatus {
  return { server, state: 'connecting', since: Date.now(), attempts: 0, lastError: null, serverInfo: null, protocolVersion: null, pid: null };
}

/** An upstream's actor; until its boot slot comes, calls wait for it (in order) and the status says `connecting`. */
class PoolEntry implements Upstream {
  lastStatus: ActorStatus;
  stopped = false;
  private handle: ActorHandle | null = null;
  /** The actor once booting, null if the entry was stopped before its slot came. */
  private started: Promise<ActorHandle | null>;

  constructor(
    readonly config: ServerConfig,
    private readonly spawn: (entry: PoolEntry) => Promise<ActorHandle | null>,
  ) {
    this.lastStatus = initialStatus(config.name);
    this.started = this.start();
  }

  get name(): string {
    return this.config.name;
  }

  respawn(): void {
    this.lastStatus = initialStatus(this.name);
    this.handle = null;
    this.started = this.start();
  }

  private async start(): Promise<ActorHandle | null> {
    this.handle = await this.spawn(this);
    return this.handle;
  }

  /** Uses the actor at once if it runs, else once it boots; `stopped` answers for an entry stopped before that. */
  private use<T>(act: (handle: ActorHandle) => T | Promise<T>, stopped: () => T): Promise<T> {
    if (this.handle) return Promise.resolve(act(this.handle));
    return this.started.then((handle) => (handle ? act(handle) : stopped()));
  }

  list(kind: ListKind, fresh: boolean): Promise<ListAnswer> {
    return this.use((handle) => handle.list(kind, fresh), () => unavailableList(this.name, kind, NOT_STARTED));
  }
  forward(req: ForwardRequest): Promise<ForwardOutcome> {
    return this.use((handle) => handle.forward(req), () => unavailableForward(this.name, NOT_STARTED));
  }
  cancel(id: string, reason: string): void {
    void this.use((handle) => handle.cancel(id, reason), () => undefined);
  }
  dropCache(): void {
    void this.use((handle) => handle.dropCache(), () => undefined);
  }
  command(command: ActorCommand): void {
    void this.use((handle) => handle.command(command), () => undefined);
  }
  status(): ActorStatus {
    return this.lastStatus;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await (await this.started)?.stop();
  }
}

export class UpstreamPool extends EventEmitter<PoolEvents> implements UpstreamDirectory {
  private entries = new Map<string, PoolEntry>();
  private readonly boots: BootSlots;

  constructor(
    private readonly tuning: ActorTuning,
    private readonly logDir: string,
    private readonly log: Logger,
    concurrentBoots = DEFAULT_CONCURRENT_BOOTS,
  ) {
    super();
    this.boots = new BootSlots(concurrentBoots);
  }

  /** Starts the server's actor (it connects in the background). */
  start(config: ServerConfig): void {
    if (this.entries.has(config.name)) return;
    this.entries.set(config.name, new PoolEntry(config, (entry) => this.spawn(entry)));
  }

  /** Waits for a boot slot; the slot is freed by the actor's first event (it booted and started connecting) or its exit. */
  private async spawn(entry: PoolEntry): Promise<ActorHandle | null> {
    const booted = await this.boots.acquire();
    if (entry.stopped) {
      booted();
      return null;
    }
    return spawnActor(
      { config: entry.config, logFile: join(this.logDir, `${entry.config.name}.log`), tuning: this.tuning },
      {
        onEvent: (event) => {
          booted();
          this.onEvent(entry, event);
        },
        onExit: (reason) => {
          booted();
          if (entry.stopped) return;
          this.log.error('actor worker died; replacing it', { server: entry.name, reason });
          setTimeout(() => entry.stopped || entry.respawn(), RESPAWN_DELAY_MS).unref();
        },
        onLost: (what, reason) => this.log.warn(`${what} from the actor could not be read`, { server: entry.name, reason }),
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
      default:
        this.emit('client', event);
    }
  }

  async stop(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    await entry.stop();
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
