// W3C trace context as MCP carries it: `_meta.traceparent` / `_meta.tracestate`
// in a request's params (the 2026-07-28 revision) or the HTTP `traceparent` /
// `tracestate` headers. Pure.

export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The sampled flag. */
  sampled: boolean;
  tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const ALL_ZERO = /^0+$/;
/** W3C: at most 32 list members of at most 256 characters; a longer header is dropped, not cut. */
const MAX_TRACESTATE = 512;

/**
 * A valid version-00 traceparent, or null (the trace then starts here). Exact,
 * untrimmed: a valid one goes on as an HTTP header as it came (an HTTP parser
 * has already taken the spaces off a header's value).
 */
export function parseTraceparent(value: unknown, tracestate?: unknown): TraceParent | null {
  if (typeof value !== 'string') return null;
  const match = TRACEPARENT.exec(value);
  if (!match || ALL_ZERO.test(match[1]!) || ALL_ZERO.test(match[2]!)) return null;
  const parent: TraceParent = { traceId: match[1]!, spanId: match[2]!, sampled: (parseInt(match[3]!, 16) & 1) === 1 };
  if (typeof tracestate === 'string' && tracestate.length > 0 && tracestate.length <= MAX_TRACESTATE) parent.tracestate = tracestate;
  return parent;
}

export function formatTraceparent(traceId: string, spanId: string, sampled: boolean): string {
  return `00-${traceId}-${spanId}-${sampled ? '01' : '00'}`;
}

/** The client's trace: `_meta` wins over the HTTP headers (it belongs to this one message of a batch). */
export function incomingTrace(params: Record<string, unknown>, headers: Record<string, string | string[] | undefined> | undefined): TraceParent | null {
  const meta = params._meta as Record<string, unknown> | undefined;
  const fromMeta = meta && parseTraceparent(meta.traceparent, meta.tracestate);
  if (fromMeta) return fromMeta;
  return headers ? parseTraceparent(headers.traceparent, headers.tracestate) : null;
}

/** `params` with `_meta.traceparent` (and tracestate) set for the upstream, the client's other `_meta` kept. */
export function withTraceMeta(params: Record<string, unknown>, traceparent: string, tracestate: string | undefined): Record<string, unknown> {
  const meta: Record<string, unknown> = { ...(params._meta as Record<string, unknown> | undefined), traceparent };
  if (tracestate === undefined) delete meta.tracestate;
  else meta.tracestate = tracestate;
  return { ...params, _meta: meta };
}
