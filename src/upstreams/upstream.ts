// What the router needs of one upstream: UpstreamActor implements it over an
// actor worker; nothing in the router knows about threads.
import type { ActorCommand, ActorStatus, ForwardOutcome, ForwardRequest, Progress } from '../protocol/actor.js';
import type { ListKind } from '../protocol/capabilities.js';
import type { ErrorBody } from '../protocol/errors.js';
import type { ServerConfig } from '../protocol/server-config.js';

/**
 * `fetchedAt`: when the actor's cached list was fetched from the upstream (its TTL runs from there);
 * `expiresAt`: when the actor's entry goes stale, if sooner than that TTL (the upstream's own ttlMs);
 * `cached`: the actor answered from that cache.
 */
export type ListAnswer =
  | { ok: true; state: 'live'; items: Record<string, unknown>[]; version: number; fetchedAt: number; expiresAt?: number; cached?: boolean }
  | { ok: true; state: 'unsupported'; version: number; fetchedAt: number; expiresAt?: number; cached?: boolean }
  | { ok: false; error: ErrorBody };

/** What travels back with one forwarded call besides its outcome. */
export interface ForwardHooks {
  /** The upstream's progress, when the request asked for it; never after the outcome. */
  onProgress?: (progress: Progress) => void;
  /** A `timed` request: when the actor sent it upstream and had the answer (epoch ms), before the outcome. */
  onUpstreamTimes?: (sentAt: number, answeredAt: number) => void;
}

export interface Upstream {
  readonly name: string;
  readonly config: ServerConfig;
  list(kind: ListKind, fresh: boolean): Promise<ListAnswer>;
  forward(req: ForwardRequest, hooks?: ForwardHooks): Promise<ForwardOutcome>;
  cancel(id: string, reason: string): void;
  command(command: ActorCommand): void;
  /** The client session is over: its per_session connection, if a request of it opened one here, closes. */
  closeSession(session: string): void;
  /** The status from the actor's last state event (no round trip). */
  readonly lastStatus: ActorStatus;
}

export interface UpstreamDirectory {
  /** Enabled upstreams with a running actor. */
  active(): readonly Upstream[];
  get(name: string): Upstream | undefined;
}
