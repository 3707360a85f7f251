// Spans for coffer's own work, exported over OTLP/HTTP. The OpenTelemetry SDK
// is imported only when an endpoint is configured: without one the daemon has
// no tracer and each request pays one `undefined` check. A request continues
// the client's trace (`_meta` or HTTP headers, trace-context.ts); the request
// span's children are the routing step (name resolution and the switch) and
// the forwarded call, whose context the upstream receives.
import type { Context, Span, Tracer } from '@opentelemetry/api';
import { requestOutcomeLabel } from './metric-labels.js';
import { formatTraceparent, incomingTrace } from './trace-context.js';

export interface StepSpan {
  end(error?: unknown): void;
}

export interface UpstreamSpan {
  /** For the upstream: in `_meta` and, over HTTP, as headers. */
  traceparent: string;
  tracestate?: string;
  end(error: unknown): void;
}

export interface RequestTrace {
  /** For the log records about this request. */
  readonly traceId: string;
  step(name: string): StepSpan;
  upstream(server: string, method: string): UpstreamSpan;
  end(error: unknown): void;
}

export interface RequestInfo {
  method: string;
  params: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined> | undefined;
  session: string;
  id: string | number;
}

export interface Tracing {
  request(info: RequestInfo): RequestTrace;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

type Api = typeof import('@opentelemetry/api');

/** Ends a span with its outcome: an error sets the status and the same bounded kind the metrics use. */
function finish(api: Api, span: Span, error: unknown): void {
  if (error !== null && error !== undefined) {
    span.setAttribute('error.type', requestOutcomeLabel(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}

class SpanTree implements RequestTrace {
  private readonly context: Context;
  readonly traceId: string;

  constructor(
    private readonly api: Api,
    private readonly tracer: Tracer,
    private readonly span: Span,
    parent: Context,
  ) {
    this.context = api.trace.setSpan(parent, span);
    this.traceId = span.spanContext().traceId;
  }

  step(name: string): StepSpan {
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.INTERNAL }, this.context);
    return { end: (error) => finish(this.api, span, error) };
  }

  upstream(server: string, method: string): UpstreamSpan {
    const span = this.tracer.startSpan(method, { kind: this.api.SpanKind.CLIENT, attributes: { 'mcp.method.name': method, 'coffer.upstream': server } }, this.context);
    const { traceId, spanId, traceFlags, traceState } = span.spanContext();
    const tracestate = traceState?.serialize();
    return {
      traceparent: formatTraceparent(traceId, spanId, (traceFlags & this.api.TraceFlags.SAMPLED) === this.api.TraceFlags.SAMPLED),
      ...(tracestate ? { tracestate } : {}),
      end: (error) => finish(this.api, span, error),
    };
  }

  end(error: unknown): void {
    finish(this.api, this.span, error);
  }
}

/** Loads the SDK and the OTLP/HTTP exporter; spans go out in batches to `endpoint` (the full …/v1/traces URL). */
export async function startTracing(endpoint: string, version: string): Promise<Tracing> {
  const [api, sdk, otlp] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-trace'), import('@opentelemetry/exporter-trace-otlp-http')]);
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'coffer', 'service.version': version }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new otlp.OTLPTraceExporter({ url: endpoint }) })],
  });
  const tracer = provider.getTracer('coffer', version);
  return {
    request({ method, params, headers, session, id }) {
      const incoming = incomingTrace(params, headers);
      const parent = incoming
        ? api.trace.setSpanContext(api.ROOT_CONTEXT, {
            traceId: incoming.traceId,
            spanId: incoming.spanId,
            traceFlags: incoming.sampled ? api.TraceFlags.SAMPLED : api.TraceFlags.NONE,
            isRemote: true,
            ...(incoming.tracestate ? { traceState: api.createTraceState(incoming.tracestate) } : {}),
          })
        : api.ROOT_CONTEXT;
      const attributes = { 'mcp.method.name': method, 'mcp.session.id': session, 'jsonrpc.request.id': String(id) };
      const span = tracer.startSpan(method, { kind: api.SpanKind.SERVER, attributes }, parent);
      return new SpanTree(api, tracer, span, parent);
    },
    shutdown: () => provider.shutdown(),
  };
}
