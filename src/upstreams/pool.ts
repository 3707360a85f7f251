// The actor pool: one UpstreamActor per enabled upstream. It starts and stops
// actors as servers come and go (a few booting at a time) and re-emits their
// events for the router. An actor whose worker dies replaces it.
import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { ActorEvent, ActorHeap, ActorStatus, ActorTuning } from '../protocol/actor.js';
import type { ListKind } from '../protocol/capabilities.js';
import type { OAuthAction, OAuthOutcome, OAuthRecord } from '../protocol/oauth.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { Logger } from '../log.js';
import type { RestartSchedule } from '../supervision/restart-schedule.js';
import { UpstreamActor } from './actor.js';
import { Slots } from '../supervision/slots.js';
import { ScriptStore } from '../../workers/actor/code-cache.cjs';
import { ACTOR_SCRIPTS } from '../paths.js';
import type { Upstream, UpstreamDirectory } from './upstream.js';

export interface PoolEvents {
  state: [server: string, status: ActorStatus];
  list_changed: [server: string, kind: ListKind];
  /** The upstream's requests and notifications for clients. */
  client: [event: Extract<ActorEvent, { type: 'client_request' | 'client_request_cancelled' | 'notification' }>];
}

/** Where the pool keeps upstreams' OAuth state (sealed, by the DB writer). */
export interface OAuthRecords {
  load(server: string): Promise<OAuthRecord | null>;
  save(server: string, record: OAuthRecord | null): void;
}

/** Where the actors write: their logs (`<server>.log`) and the code caches of their scripts. */
export interface ActorDirs {
  logs: string;
  codeCache: string;
}

/**
 * An actor worker that died is replaced after 1 s, doubling to a minute while
 * it keeps dying; one that stayed up a minute starts over. No give-up: a death
 * is coffer's or memory's fault, not the upstream's, and a try a minute costs
 * little (disable and enable the server to try at once).
 */
const ACTOR_RESTART: RestartSchedule = { baseMs: 1_000, capMs: 60_000, resetAfterMs: 60_000 };
/**
 * Workers booting at once: two per core keeps the cores busy while a boot waits on file reads.
 * A boot is CPU work (a V8 isolate, Node's bootstrap, the actor's modules); hundreds started
 * together share the cores until all are ready at about the same late moment, and the main thread
 * starves meanwhile. In slots the first upstreams are ready early and the main thread keeps
 * answering; the total CPU is the same either way.
 */
export const DEFAULT_CONCURRENT_BOOTS = 2 * availableParallelism();

export class UpstreamPool extends EventEmitter<PoolEvents> implements UpstreamDirectory {
  private entries = new Map<string, UpstreamActor>();
  /** active()'s answer until the next start or stop: it is asked on every list and every modern call. */
  private activeList: readonly Upstream[] | null = null;
  private readonly boots: Slots;
  /** The actor's scripts and code caches, read once for all its workers. */
  private readonly scripts: ScriptStore;

  constructor(
    private readonly tuning: ActorTuning,
    private readonly dirs: ActorDirs,
    private readonly log: Logger,
    concurrentBoots = DEFAULT_CONCURRENT_BOOTS,
    private readonly oauthRecords: OAuthRecords | null = null,
  ) {
    super();
    this.boots = new Slots(concurrentBoots);
    this.scripts = new ScriptStore(ACTOR_SCRIPTS, dirs.codeCache);
  }

  /** Starts the server's actor (it connects in the background). */
  start(config: ServerConfig): void {
    const name = config.name;
    if (this.entries.has(name)) return;
    const actor = new UpstreamActor(
      { config, logFile: join(this.dirs.logs, `${name}.log`), tuning: this.tuning, bootSlot: () => this.boots.acquire(), restart: ACTOR_RESTART,
        scripts: () => this.scripts.current(),
        ...(this.oauthRecords ? { oauthRecord: () => this.oauthRecords!.load(name) } : {}) },
      {
        onEvent: (event) => this.onEvent(name, event),
        onExit: (reason) => this.log.error('actor worker died; replacing it', { server: name, reason }),
        onLost: (what, reason) => this.log.warn(`${what} from the actor could not be read`, { server: name, reason }),
      },
    );
    this.entries.set(name, actor);
    this.activeList = null;
  }

  private onEvent(server: string, event: ActorEvent): void {
    switch (event.type) {
      case 'state':
        this.emit('state', server, event.status);
        break;
      case 'list_changed':
        this.emit('list_changed', server, event.kind);
        break;
      // Secrets: stored, never emitted.
      case 'oauth_saved':
        this.oauthRecords?.save(server, event.record);
        break;
      default:
        this.emit('client', event);
    }
  }

  async stop(name: string): Promise<void> {
    const entry = this.entries.get(name);
    if (!entry) return;
    this.entries.delete(name);
    this.activeList = null;
    await entry.stop();
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((name) => this.stop(name)));
  }

  active(): readonly Upstream[] {
    return (this.activeList ??= [...this.entries.values()]);
  }

  get(name: string): Upstream | undefined {
    return this.entries.get(name);
  }

  /** One OAuth sign-in step for a running actor (null: none by that name). */
  oauth(name: string, action: OAuthAction): Promise<OAuthOutcome> | null {
    return this.entries.get(name)?.oauth(action) ?? null;
  }

  status(name: string): ActorStatus | null {

    return this.entries.get(name)?.lastStatus ?? null;
  }

  statuses(): ActorStatus[] {
    return [...this.entries.values()].map((entry) => entry.lastStatus);
  }

  /** Each running actor's heap, asked of all at once; an actor that does not answer within `deadlineMs` is left out. */
  async heaps(deadlineMs: number): Promise<{ server: string; heap: ActorHeap }[]> {
    const actors = [...this.entries.values()];
    const heaps = await Promise.all(actors.map((actor) => actor.heap(deadlineMs)));
    return actors.flatMap((actor, i) => (heaps[i] ? [{ server: actor.name, heap: heaps[i] }] : []));
  }
}
