// Spans for coffer's own work, exported over OTLP/HTTP. The OpenTelemetry SDK
// is imported only when an endpoint is configured: without one the daemon has
// no tracer and each request pays one `undefined` check. A request continues
// the client's trace (`_meta` or HTTP headers, trace-context.ts); the request
// span's children are the routing step (name resolution and the switch) and
// the actor hop, whose child is the upstream request as the actor timed it.
// That span is made once its times are known, with the id the upstream already
// received as its parent (HandOverIds).
import type { Context, Span, Tracer } from '@opentelemetry/api';
import type { SessionTags } from '../mcp/session-tag.js';
import { clipText, MAX_ERROR_TEXT_CHARS } from '../protocol/untrusted-text.js';
import { requestMethodLabel, requestOutcomeLabel } from './metric-labels.js';
import type { TraceSampling } from './ops-settings.js';
import { formatTraceparent, incomingTrace } from './trace-context.js';

export interface StepSpan {
  end(error?: unknown): void;
}

export interface UpstreamSpan {
  /** For the upstream: in `_meta` and, over HTTP, as headers. */
  traceparent: string;
  tracestate?: string;
  /** When the actor sent the request and had its answer (epoch ms); before end(). */
  upstreamTimes(sentAt: number, answeredAt: number): void;
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
  /** A 2025 session's id; a modern request has none. */
  session?: string;
  id: string | number;
}

export interface Tracing {
  request(info: RequestInfo): RequestTrace;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

type Api = typeof import('@opentelemetry/api');

/** Ends a span with its outcome: an error sets the status and the same bounded kind the metrics use. */
function finish(api: Api, span: Span, error: unknown, endTime?: number): void {
  if (error !== null && error !== undefined) {
    span.setAttribute('error.type', requestOutcomeLabel(error));
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: ownText(error instanceof Error ? error.message : String(error)) });
  }
  span.end(endTime);
}

/**
 * A client's text (a method, an id, an error quoting it) as a span keeps it until
 * exported: clipped, and copied, as a slice would keep all of a huge string alive.
 */
function ownText(text: string): string {
  return text.length <= MAX_ERROR_TEXT_CHARS ? text : Buffer.from(clipText(text), 'utf16le').toString('utf16le');
}

const epochMs = (): number => performance.timeOrigin + performance.now();

/**
 * Random ids, except for the one span whose id was handed to the upstream
 * before the span could exist: `next` is used by the very next span started
 * (the caller sets it right before, synchronously).
 */
class HandOverIds {
  next: string | undefined;

  constructor(private readonly random: { generateTraceId(): string; generateSpanId(): string }) {}

  generateTraceId(): string {
    return this.random.generateTraceId();
  }

  generateSpanId(): string {
    const id = this.next ?? this.random.generateSpanId();
    this.next = undefined;
    return id;
  }
}

class SpanTree implements RequestTrace {
  private readonly context: Context;
  readonly traceId: string;

  constructor(
    private readonly api: Api,
    private readonly tracer: Tracer,
    private readonly ids: HandOverIds,
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
    const { api, tracer, ids } = this;
    const attributes = { 'mcp.method.name': method, 'coffer.upstream': server };
    const hopStart = epochMs();
    const hop = tracer.startSpan('coffer.actor', { kind: api.SpanKind.INTERNAL, attributes, startTime: hopStart }, this.context);
    const hopContext = api.trace.setSpan(this.context, hop);
    const { traceId, traceFlags, traceState } = hop.spanContext();
    const upstreamSpanId = ids.generateSpanId();
    const tracestate = traceState?.serialize();
    let times: [number, number] | undefined;
    return {
      traceparent: formatTraceparent(traceId, upstreamSpanId, (traceFlags & api.TraceFlags.SAMPLED) === api.TraceFlags.SAMPLED),
      ...(tracestate ? { tracestate } : {}),
      upstreamTimes: (sentAt, answeredAt) => (times = [sentAt, answeredAt]),
      end: (error) => {
        // Without the actor's times (it died, or its answer was lost) the request spans the hop.
        // Each thread derives wall time from its own timeOrigin, so the actor's clock may be a
        // little off the main thread's: the request is held inside its hop.
        const hopEnd = epochMs();
        const [sentAt, answeredAt] = times ? [Math.max(times[0], hopStart), Math.min(times[1], hopEnd)] : [hopStart, hopEnd];
        ids.next = upstreamSpanId;
        const request = tracer.startSpan(method, { kind: api.SpanKind.CLIENT, attributes, startTime: sentAt }, hopContext);
        ids.next = undefined;
        finish(api, request, error, Math.max(answeredAt, sentAt));
        finish(api, hop, error, hopEnd);
      },
    };
  }

  end(error: unknown): void {
    finish(this.api, this.span, error);
  }
}

type Sdk = typeof import('@opentelemetry/sdk-trace');

/** The SDK's TracerProvider does not read OTEL_TRACES_SAMPLER itself (2.x): the sampler is built from the settings. */
function samplerOf(sdk: Sdk, { root, ratio, parentBased }: TraceSampling): import('@opentelemetry/sdk-trace').Sampler {
  const rootSampler = root === 'always_on' ? new sdk.AlwaysOnSampler() : root === 'always_off' ? new sdk.AlwaysOffSampler() : new sdk.TraceIdRatioBasedSampler(ratio);
  return parentBased ? new sdk.ParentBasedSampler({ root: rootSampler }) : rootSampler;
}

/** Loads the SDK and the OTLP/HTTP exporter; kept spans go out in batches to `endpoint` (the full …/v1/traces URL). */
export async function startTracing(endpoint: string, version: string, sampling: TraceSampling, sessionTags: SessionTags): Promise<Tracing> {
  const [api, sdk, otlp] = await Promise.all([import('@opentelemetry/api'), import('@opentelemetry/sdk-trace'), import('@opentelemetry/exporter-trace-otlp-http')]);
  const { resourceFromAttributes } = await import('@opentelemetry/resources');
  const ids = new HandOverIds(new sdk.RandomIdGenerator());
  const provider = new sdk.TracerProvider({
    idGenerator: ids,
    sampler: samplerOf(sdk, sampling),
    resource: resourceFromAttributes({ 'service.name': 'coffer', 'service.version': version }),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter: new otlp.OTLPTraceExporter({ url: endpoint }) })],
  });
  const tracer = provider.getTracer('coffer', version);
  // A session's id works as its credential, and spans leave the machine: they carry its tag (the one its invocation rows carry).
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
      // A made-up method names no span (a backend indexes span names): it is kept as an attribute.
      const attributes = { 'mcp.method.name': ownText(method), ...(session === undefined ? {} : { 'mcp.session.id': sessionTags.tag(session) }), 'jsonrpc.request.id': ownText(String(id)) };
      const span = tracer.startSpan(requestMethodLabel(method), { kind: api.SpanKind.SERVER, attributes }, parent);
      return new SpanTree(api, tracer, ids, span, parent);
    },
    shutdown: () => provider.shutdown(),
  };
}
