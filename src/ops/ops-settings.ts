// How the operator set up metrics and tracing: DaemonOptions first, else the
// environment (so `coffer serve` and `coffer daemon start` take them without
// flags of their own). A wrong value stops the start with what to write.
import { CofferError } from '../protocol/errors.js';

/** 'token' (default): /metrics wants the API token. 'none': anyone who reaches 127.0.0.1 may scrape. 'off': not collected at all. */
export type MetricsMode = 'token' | 'none' | 'off';

export interface OpsSettings {
  metrics: MetricsMode;
  /** OTLP/HTTP base URL (…/v1/traces is appended) or full traces URL; null: tracing off. */
  otlpEndpoint: string | null;
}

function metricsMode(env: NodeJS.ProcessEnv): MetricsMode {
  const metrics = env.COFFER_METRICS ?? 'on';
  const auth = env.COFFER_METRICS_AUTH ?? 'token';
  if (metrics !== 'on' && metrics !== 'off') throw new CofferError('CONFIG_INVALID', `COFFER_METRICS must be 'on' or 'off', not '${metrics}'`);
  if (auth !== 'token' && auth !== 'none') throw new CofferError('CONFIG_INVALID', `COFFER_METRICS_AUTH must be 'token' or 'none', not '${auth}'`);
  return metrics === 'off' ? 'off' : auth;
}

/** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is used as is, OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces (the OTLP spec's rule). */
function otlpEndpoint(env: NodeJS.ProcessEnv): string | null {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  return base ? `${base.replace(/\/+$/, '')}/v1/traces` : null;
}

export function opsSettings(given: Partial<OpsSettings>, env: NodeJS.ProcessEnv = process.env): OpsSettings {
  const endpoint = given.otlpEndpoint !== undefined ? given.otlpEndpoint : otlpEndpoint(env);
  if (endpoint !== null && !URL.canParse(endpoint)) throw new CofferError('CONFIG_INVALID', `the OTLP traces endpoint '${endpoint}' is not a URL: use e.g. http://127.0.0.1:4318`);
  return { metrics: given.metrics ?? metricsMode(env), otlpEndpoint: endpoint };
}
