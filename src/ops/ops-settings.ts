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
  sampling: TraceSampling;
}

/**
 * Which traces are kept (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG): a
 * request without a parent by `root`; with one, by the parent's decision when
 * `parentBased`, else by `root` too. `ratio` is traceidratio's share.
 */
export interface TraceSampling {
  root: 'always_on' | 'always_off' | 'traceidratio';
  ratio: number;
  parentBased: boolean;
}

const ROOT_SAMPLERS: readonly TraceSampling['root'][] = ['always_on', 'always_off', 'traceidratio'];
const PARENT_BASED = 'parentbased_';

/** The OpenTelemetry SDK spec's names and default (parentbased_always_on); its other samplers (jaeger_remote, xray) are refused. */
function traceSampling(env: NodeJS.ProcessEnv): TraceSampling {
  const name = env.OTEL_TRACES_SAMPLER || `${PARENT_BASED}always_on`;
  const parentBased = name.startsWith(PARENT_BASED);
  const root = (parentBased ? name.slice(PARENT_BASED.length) : name) as TraceSampling['root'];
  if (!ROOT_SAMPLERS.includes(root)) {
    const known = ROOT_SAMPLERS.flatMap((sampler) => [sampler, `${PARENT_BASED}${sampler}`]).join(', ');
    throw new CofferError('CONFIG_INVALID', `OTEL_TRACES_SAMPLER '${name}' is not a sampler coffer has: use one of ${known}`);
  }
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = root !== 'traceidratio' || arg === undefined || arg === '' ? 1 : Number(arg);
  if (!(ratio >= 0 && ratio <= 1)) throw new CofferError('CONFIG_INVALID', `OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 (e.g. 0.1 keeps a tenth of the traces), not '${arg}'`);
  return { root, ratio, parentBased };
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
  return { metrics: given.metrics ?? metricsMode(env), otlpEndpoint: endpoint, sampling: given.sampling ?? traceSampling(env) };
}
