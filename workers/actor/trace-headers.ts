// The W3C trace context of a request to an HTTP upstream goes in its headers
// as well as in `_meta` (where the router put it, or where the client's own
// came with it): upstreams that trace at the HTTP layer see the same trace.
import type { Http1Headers } from './http1.js';
import { parseTraceparent } from '../../src/ops/trace-context.js';

/** Visible ASCII only: a header value with a line break would fail the whole request. */
const HEADER_SAFE = /^[\x20-\x7e]*$/;

export function addTraceHeaders(headers: Http1Headers, message: { params?: unknown }): void {
  const meta = (message.params as { _meta?: { traceparent?: unknown; tracestate?: unknown } } | undefined)?._meta;
  if (meta?.traceparent === undefined) return;
  const parent = parseTraceparent(meta.traceparent, meta.tracestate);
  if (!parent) return;
  headers.traceparent = meta.traceparent as string;
  if (parent.tracestate !== undefined && HEADER_SAFE.test(parent.tracestate)) headers.tracestate = parent.tracestate;
}
