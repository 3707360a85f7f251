// GET /daemon/status: the daemon's phase and a count of its upstreams. An
// upstream counts as degraded while it is not ready or is left out of a list.
import type { DaemonStatus } from '../api/routes/daemon.js';
import { nativeBindingLoaded } from '../http/uws.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { ActorStatus } from '../protocol/actor.js';

export interface StatusSources {
  phase: DaemonStatus['status'];
  version: string;
  startedAt: string;
  port: number;
  configs: ServerConfig[];
  statuses: ActorStatus[];
  /** Upstreams left out of some list. */
  degraded: string[];
}

export function daemonStatus({ phase, version, startedAt, port, configs, statuses, degraded }: StatusSources): DaemonStatus {
  return {
    status: phase,
    version,
    started_at: startedAt,
    port,
    pid: process.pid,
    native_http: nativeBindingLoaded(),
    upstreams: {
      registered: configs.length,
      enabled: configs.filter((config) => config.enabled).length,
      healthy: statuses.filter((status) => status.state === 'ready').length,
      degraded: new Set([...degraded, ...statuses.filter((status) => status.state !== 'ready').map((status) => status.server)]).size,
    },
  };
}
