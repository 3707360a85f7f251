// The daemon's operations side, assembled: readiness from the writer, the
// actors and the router's degradation events. The daemon hands it its parts
// once; /readyz, /metrics and the REST API read from here.
import type { RestartingWriter } from '../db/restarting-writer.js';
import type { OpsEndpoints } from '../http/ops-routes.js';
import type { ServerConfig } from '../protocol/server-config.js';
import type { Router } from '../router/router.js';
import type { UpstreamPool } from '../upstreams/pool.js';
import { DegradedReasons } from './degraded-reasons.js';
import { readiness, type Readiness } from './readiness.js';

export interface OperationsParts {
  writer: RestartingWriter;
  pool: UpstreamPool;
  router: Router;
  /** Every registered server. */
  configs(): readonly ServerConfig[];
}

export class Operations {
  private readonly reasons = new DegradedReasons();

  constructor(private readonly parts: OperationsParts) {
    parts.router.on('degraded', (server, kind, reason) => this.reasons.degraded(server, kind, reason));
    parts.router.on('recovered', (server, kind) => this.reasons.recovered(server, kind));
  }

  readiness(withDetail: boolean): Readiness {
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

  endpoints(token: () => string): OpsEndpoints {
    return { readiness: (withDetail) => this.readiness(withDetail), metrics: null, token };
  }
}
