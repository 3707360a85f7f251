// Whether coffer can serve as configured: its DB writer is up and every
// enabled upstream is connected and answering its lists. Pure: the daemon
// gathers the inputs, /readyz, the REST API and `coffer daemon status` show
// the one answer.
import type { ActorStatus } from '../protocol/actor.js';
import type { ServerConfig } from '../protocol/server-config.js';

export interface UpstreamReadiness {
  server: string;
  /** The actor's connection state. */
  state: ActorStatus['state'];
  /** Left out of a list answer: clients are served without it until it answers again. */
  degraded: boolean;
  ready: boolean;
  /** coffer's own words for why it is not ready (no upstream text: the body is public). */
  reason?: string;
  /** The upstream's last error or the list failure as received; only for a token holder. */
  detail?: string;
}

export interface Readiness {
  status: 'ready' | 'not_ready';
  db_writer: 'up' | 'down';
  /** Enabled upstreams that are not ready, by name; empty when all are. */
  not_ready: UpstreamReadiness[];
  upstreams: { enabled: number; ready: number };
}

export interface ReadinessSources {
  writerUp: boolean;
  configs: readonly ServerConfig[];
  /** The actors' last states, by server (absent: its actor has not started yet). */
  status(server: string): ActorStatus | null;
  /** Why a degraded upstream was left out of a list; undefined when it is not degraded. */
  degradedReason(server: string): { kinds: string[]; reason: string } | undefined;
}

function upstreamReadiness(config: ServerConfig, sources: ReadinessSources, withDetail: boolean): UpstreamReadiness {
  const status = sources.status(config.name);
  const state = status?.state ?? 'connecting';
  const degraded = sources.degradedReason(config.name);
  const notReady = (reason: string, detail: string | null | undefined): UpstreamReadiness => ({
    server: config.name,
    state,
    degraded: degraded !== undefined,
    ready: false,
    reason,
    ...(withDetail && detail ? { detail } : {}),
  });
  if (state === 'connecting') return notReady('connecting', status?.lastError);
  if (state === 'backoff') return notReady(`reconnecting after ${status?.attempts ?? 0} failed attempts`, status?.lastError);
  if (state !== 'ready') return notReady(`actor ${state}`, status?.lastError);
  if (degraded) return notReady(`left out of ${degraded.kinds.join(', ')} lists until it answers again`, degraded.reason);
  return { server: config.name, state, degraded: false, ready: true };
}

export function readiness(sources: ReadinessSources, withDetail: boolean): Readiness {
  const enabled = sources.configs.filter((config) => config.enabled);
  const notReady = enabled.map((config) => upstreamReadiness(config, sources, withDetail)).filter((upstream) => !upstream.ready);
  return {
    status: sources.writerUp && notReady.length === 0 ? 'ready' : 'not_ready',
    db_writer: sources.writerUp ? 'up' : 'down',
    not_ready: notReady,
    upstreams: { enabled: enabled.length, ready: enabled.length - notReady.length },
  };
}
