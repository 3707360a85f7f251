// The daemon's operations side, assembled: readiness (writer, actors, the
// router's degradation events) and the metrics with their hooks. Made before
// the daemon's parts (the writer's and the dispatcher's hooks are handed out
// first); attach() gives it the parts once they exist.
import { readFile } from 'node:fs/promises';
import type { RestartingWriter } from '../db/restarting-writer.js';
import type { OpsEndpoints } from '../http/ops-routes.js';
import type { Logger } from '../log.js';
import type { SessionRegistry } from '../mcp/sessions.js';
import type { InvocationRecord } from '../protocol/events.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { Router } from '../router/router.js';
import { inFlight } from '../upstreams/in-flight.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import { DegradedReasons } from './degraded-reasons.js';
import { GatewayMetrics } from './metrics.js';
import type { OpsSettings } from './ops-settings.js';
import { readiness, type Readiness } from './readiness.js';
import { startTracing, type Tracing } from './tracing.js';
import type { SessionTags } from '../mcp/session-tag.js';

export interface OperationsParts {
  writer: RestartingWriter;
  pool: UpstreamPool;
  router: Router;
  sessions: SessionRegistry;
  /** Every registered server. */
  configs(): readonly ServerConfig[];
  registered(server: string): boolean;
}

/** How long a scrape waits for an actor's heap report; an actor slower than that is left out of it. */
const ACTOR_HEAP_DEADLINE_MS = 1_000;

/** VmRSS of /proc/<pid>/status, in bytes; null where there is no such file. */
async function processRss(pid: number): Promise<number | null> {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(await readFile(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

export class Operations {
  private readonly reasons = new DegradedReasons();
  private parts: OperationsParts | null = null;
  /** Null when the operator turned metrics off: every hook is then a no-op. */
  readonly metrics: GatewayMetrics | null;
  /** Undefined unless an OTLP endpoint is configured (startTracing). */
  tracing: Tracing | undefined;

  constructor(readonly settings: OpsSettings) {
    this.metrics = settings.metrics === 'off' ? null : new GatewayMetrics();
  }

  /** For openRestartingWriter's onCall. */
  get dbCall(): ((method: string) => () => void) | undefined {
    const metrics = this.metrics;
    return metrics ? (method) => metrics.dbCall(method) : undefined;
  }

  /** For the dispatcher's onAnswered. */
  get requestAnswered(): ((method: string, error: unknown) => void) | undefined {
    const metrics = this.metrics;
    return metrics ? (method, error) => metrics.request(method, error) : undefined;
  }

  /** Loads the tracing SDK when an endpoint is configured; nothing is loaded otherwise. */
  async startTracing(version: string, sessionTags: SessionTags): Promise<void> {
    if (this.settings.otlpEndpoint !== null) this.tracing = await startTracing(this.settings.otlpEndpoint, version, this.settings.sampling, sessionTags);
  }

  /** Exports the spans still buffered, for at most `ms` (an unreachable collector must not hold up the stop). */
  async close(ms = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.tracing?.shutdown().catch(() => undefined), new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
    clearTimeout(timer);
  }

  invocation(record: InvocationRecord): void {
    if (this.registered(record.server)) this.metrics?.invocation(record);
  }

  /**
   * A call can end, and an actor report its state, after its server was removed: what they report then is dropped,
   * or it would bring back the series the removal dropped (kept for ever, as nothing removes that server again).
   * The router's list events need no check: a list out across a removal reports nothing (FanOut.forget).
   */
  private registered(server: string): boolean {
    return this.parts?.registered(server) ?? true;
  }

  /** A server was removed: nothing is kept about it. */
  serverRemoved(server: string): void {
    this.reasons.forget(server);
    this.metrics?.forget(server);
  }

  attach(parts: OperationsParts): void {
    this.parts = parts;
    const { router, pool, sessions, writer } = parts;
    router.on('degraded', (server, kind, reason) => this.reasons.degraded(server, kind, reason));
    router.on('recovered', (server, kind) => this.reasons.recovered(server, kind));
    const metrics = this.metrics;
    if (!metrics) return;
    router.on('listed', (server, _kind, seconds, cached) => metrics.listed(server, seconds, cached));
    router.on('deadline_missed', (server) => metrics.listDeadlineMissed(server));
    pool.on('state', (server, status) => this.registered(server) && metrics.upstreamState(server, status.state));
    metrics.observe({
      statuses: () => pool.statuses(),
      degraded: () => router.degradedServers(),
      inFlight: (server) => ({ calls: inFlight.calls(server), bytes: inFlight.inFlight(server) }),
      sessionVersions: () => sessions.protocolVersions(),
      childRss: processRss,
      actorHeaps: () => pool.heaps(ACTOR_HEAP_DEADLINE_MS),
      writerUp: () => writer.up,
    });
  }

  readiness(withDetail: boolean): Readiness {
    if (!this.parts) return { status: 'not_ready', db_writer: 'down', not_ready: [], upstreams: { enabled: 0, ready: 0 } };
    const { writer, pool, router, configs } = this.parts;
    const degraded = new Set(router.degradedServers());
    return readiness(
      {
        writerUp: writer.up,
        configs: configs(),
        status: (server) => pool.status(server),
        degradedReason: (server) => (degraded.has(server) ? this.reasons.of(server) : undefined),
      },
      withDetail,
    );
  }

  /** `log`: where a failed collection's reason goes (the scraper is told only that it failed). */
  endpoints(token: () => string, log: Logger): OpsEndpoints {
    const metrics = this.metrics;
    const render = (): Promise<string> =>
      metrics!.render().catch((error: unknown) => {
        log.error('metrics could not be collected', { error: error instanceof Error ? error.message : String(error) });
        throw error;
      });
    return {
      readiness: (withDetail) => this.readiness(withDetail),
      metrics: metrics && { requireToken: this.settings.metrics === 'token', contentType: metrics.registry.contentType, render },
      token,
    };
  }
}
