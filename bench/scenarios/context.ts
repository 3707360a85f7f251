// What every scenario gets: the settings of this run, the shared synthetic
// HTTP host, and a logger for progress lines.
import type { Host } from '../targets/host.js';

export interface Settings {
  quick: boolean;
  /** Tools per upstream in the call and hung scenarios. */
  toolsPerUpstream: number;
  /** Tools per upstream in the fan-out scenarios (quick: fewer upstreams, more tools, same merged size). */
  fanoutTools: number;
  /** Upstreams of the warm (headline) merged list. */
  listAt: number;
  /** Upstreams of the cold merged list (each run restarts the daemon). */
  coldAt: number;
  hungUpstreams: number;
  /** Interleaved rounds of the call-overhead loops. */
  callRounds: number;
  /** Warm-up of each call loop and of each throughput path before anything is counted. */
  warmupMs: number;
  /** Interleaved rounds of warm list loops. */
  listRounds: number;
  /** Fresh daemons for the cold list. */
  coldRestarts: number;
  throughputClients: number;
  throughputMs: number;
  throughputRounds: number;
  /** The list deadline of every upstream in the hung-upstream scenario. */
  hungDeadlineMs: number;
  hungLists: number;
  hungCalls: number;
  /** How long the peer gets to become ready when one upstream hangs. */
  peerHungWaitMs: number;
  scalePoints: number[];
  /** The peer is measured at scale points up to this count. */
  peerScaleMax: number;
  footprintUpstreams: number;
  /** Upstream counts of the spread-load rows. */
  spreadPoints: number[];
  /** Upstream counts of the actor-start rows. */
  actorStartPoints: number[];
  /** Interleaved rounds of the spread latency loop. */
  spreadLatencyRounds: number;
  /** Deadline of any one measuring loop. */
  loopDeadlineMs: number;
  /** Wait bound for N upstreams to become ready. */
  readyTimeoutMs: (count: number) => number;
  cpuProfDir?: string;
}

export interface Context {
  settings: Settings;
  host: Host;
  log(message: string): void;
}
