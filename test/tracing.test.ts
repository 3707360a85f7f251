// One trace from client to upstream: the client's W3C context (in `_meta` or
// the HTTP headers) is continued by coffer's spans, exported to a local
// OTLP/HTTP receiver, and the upstream (a real fixture that reports what it
// received) sees a child of coffer's span, in `_meta` and, over HTTP, in its
// headers; a 2026-07-28 request (no session) is traced the same way. Without an
// endpoint the client's own context passes through.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startGateway, type Gateway } from './helpers/gateway.js';
import { mcpTransport } from './helpers/mcp-post.js';
import { modernPost } from './helpers/modern.js';
import { networkConfig, startNetworkFixture, stdioFixture } from './fixtures/fixture-servers.js';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Array<{ key: string; value: Record<string, unknown> }>;
}
/** OTLP SpanKind values. */
const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;

/** A local OTLP/HTTP (JSON) traces receiver. */
async function otlpReceiver(t: Test): Promise<{ url: string; spans: ExportedSpan[]; services: string[] }> {
  const spans: ExportedSpan[] = [];
  const services: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { resourceSpans: Array<{ resource: { attributes: ExportedSpan['attributes'] }; scopeSpans: Array<{ spans: ExportedSpan[] }> }> };
      for (const resource of parsed.resourceSpans) {
        services.push(String(resource.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue));
        for (const scope of resource.scopeSpans) spans.push(...scope.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, spans, services };
}

const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;
/** The fixture's tools with `trace` listed (coffer forwards only names the upstream lists). */
const TRACE_TOOL = ['--tools', 'all,trace'];

/** A daemon exporting to a local receiver, in front of the HTTP fixture as server `up`. */
async function tracedHttpUpstream(t: Test): Promise<{ receiver: Awaited<ReturnType<typeof otlpReceiver>>; gateway: Gateway }> {
  const receiver = await otlpReceiver(t);
  const fixture = await startNetworkFixture('http', TRACE_TOOL);
  t.teardown(() => fixture.kill());
  const gateway = await startGateway({ otlpEndpoint: receiver.url });
  await gateway.addServer(networkConfig('up', 'http', fixture.url));
  return { receiver, gateway };
}

/** One call's spans as exported: the request, its route step, the actor hop and the upstream request. */
function callSpans(spans: ExportedSpan[], traceId: string): Record<'server' | 'route' | 'hop' | 'upstream', ExportedSpan | undefined> {
  const trace = spans.filter((span) => span.traceId === traceId);
  return {
    server: trace.find((span) => span.kind === SERVER && span.name === 'tools/call'),
    route: trace.find((span) => span.name === 'coffer.route'),
    hop: trace.find((span) => span.name === 'coffer.actor'),
    upstream: trace.find((span) => span.kind === CLIENT),
  };
}

t.test('_meta.traceparent: client → coffer spans → HTTP upstream (in _meta and headers), one trace id', async (t) => {
  const { receiver, gateway } = await tracedHttpUpstream(t);
  const client = await gateway.client();
  const traceId = hex(16);
  const clientSpan = hex(8);

  const result = await client.callTool({ name: 'up__trace', arguments: {}, _meta: { traceparent: `00-${traceId}-${clientSpan}-01`, tracestate: 'vendor=abc' } });
  const seen = result.structuredContent as { meta: { traceparent: string; tracestate: string }; headers: { traceparent: string; tracestate: string } };
  const [, seenTrace, upstreamParent] = TRACEPARENT.exec(seen.meta.traceparent) ?? [];
  t.equal(seenTrace, traceId, 'the upstream continues the client trace');
  t.not(upstreamParent, clientSpan, "its parent is coffer's span, not the client's");
  t.equal(seen.headers.traceparent, seen.meta.traceparent, 'the same context in the HTTP header');
  t.equal(seen.meta.tracestate, 'vendor=abc', 'tracestate passed on');
  t.equal(seen.headers.tracestate, 'vendor=abc');

  await gateway.close(); // flushes the batch
  const { server, route, hop, upstream } = callSpans(receiver.spans, traceId);
  t.ok(server, 'the request span');
  t.equal(server?.parentSpanId, clientSpan, "the request span's parent is the client's span");
  t.equal(route?.kind, INTERNAL);
  t.equal(route?.parentSpanId, server?.spanId, 'route (resolution and switch) under the request');
  t.equal(hop?.kind, INTERNAL);
  t.equal(hop?.parentSpanId, server?.spanId, 'the actor hop under the request');
  t.equal(upstream?.spanId, upstreamParent, 'the span the upstream got as its parent was exported');
  t.equal(upstream?.parentSpanId, hop?.spanId, 'the upstream request under the actor hop');
  // Held inside the hop even when the threads' clocks disagree; µs rounding either side is allowed.
  const ns = (text: string | undefined): number => Number(BigInt(text ?? '0') / 1000n) / 1000;
  t.ok(ns(upstream?.startTimeUnixNano) >= ns(hop?.startTimeUnixNano) - 0.05 && ns(upstream?.endTimeUnixNano) <= ns(hop?.endTimeUnixNano) + 0.05, 'timed by the actor, within the hop');
  t.match(upstream?.attributes, [{ key: 'mcp.method.name', value: { stringValue: 'tools/call' } }, { key: 'coffer.upstream', value: { stringValue: 'up' } }]);
  t.same([...new Set(receiver.services)], ['coffer'], 'exported as service coffer');
});

t.test('HTTP traceparent header: continued to a stdio upstream in _meta', async (t) => {
  const receiver = await otlpReceiver(t);
  const gateway = await startGateway({ otlpEndpoint: receiver.url });
  await gateway.addServer(stdioFixture('local', TRACE_TOOL));
  const traceId = hex(16);
  const clientSpan = hex(8);
  const client = new Client({ name: 'traced', version: '1.0.0' });
  const transport = mcpTransport(gateway.url, gateway.daemon.token, { traceparent: `00-${traceId}-${clientSpan}-01` });
  await client.connect(transport);
  t.teardown(() => client.close());
  const sessionId = transport.sessionId;

  const seen = (await client.callTool({ name: 'local__trace', arguments: {} })).structuredContent as { meta: { traceparent: string } };
  const [, seenTrace, upstreamParent] = TRACEPARENT.exec(seen.meta.traceparent) ?? [];
  t.equal(seenTrace, traceId);
  const [row] = (await gateway.api('GET', '/invocations?server=local')).body.invocations;
  await client.close();
  await gateway.close();
  const trace = receiver.spans.filter((span) => span.traceId === traceId);
  const server = trace.find((span) => span.kind === SERVER && span.name === 'tools/call');
  t.equal(server?.parentSpanId, clientSpan);
  t.equal(trace.find((span) => span.kind === CLIENT)?.spanId, upstreamParent);
  const session = server?.attributes.find((attribute) => attribute.key === 'mcp.session.id')?.value.stringValue;
  t.match(session, /^[0-9a-f]{12}$/, "the session's tag");
  t.equal(session, row?.session, 'the tag its invocation row carries: a span and a row of one session can be matched');
  t.notOk(JSON.stringify(receiver.spans).includes(sessionId!), 'never its id: the id works as its credential');
});

t.test('a modern request (2026-07-28, no session): the same spans, continued from its _meta, to a 2025 upstream', async (t) => {
  const { receiver, gateway } = await tracedHttpUpstream(t);
  const traceId = hex(16);
  const clientSpan = hex(8);

  const answer = await modernPost(gateway, 'tools/call', { name: 'up__trace', arguments: {}, _meta: { traceparent: `00-${traceId}-${clientSpan}-01` } });
  const seen = answer.messages[0]?.result?.structuredContent as { meta: { traceparent: string } } | undefined;
  const [, seenTrace, upstreamParent] = TRACEPARENT.exec(seen?.meta.traceparent ?? '') ?? [];
  t.equal(seenTrace, traceId, 'the upstream continues the client trace', { answer: answer.text });

  await gateway.close();
  const { server, route, hop, upstream } = callSpans(receiver.spans, traceId);
  t.equal(server?.parentSpanId, clientSpan, "the request span's parent is the client's span");
  t.notOk(server?.attributes.some((attribute) => attribute.key === 'mcp.session.id'), 'no session id: the era has none');
  t.equal(route?.parentSpanId, server?.spanId, 'route under the request');
  t.equal(hop?.parentSpanId, server?.spanId, 'the actor hop under the request');
  t.equal(upstream?.spanId, upstreamParent, 'the span the upstream got as its parent was exported');
  t.equal(upstream?.parentSpanId, hop?.spanId, 'the upstream request under the actor hop');
});

t.test("a client's huge request id: its span keeps a clipped copy, not the id", async (t) => {
  const receiver = await otlpReceiver(t);
  const gateway = await startGateway({ otlpEndpoint: receiver.url });
  const traceId = hex(16);
  const id = `big-${'x'.repeat(200_000)}`;

  const answer = await modernPost(gateway, 'tools/list', { _meta: { traceparent: `00-${traceId}-${hex(8)}-01` } }, {}, id);
  t.equal(answer.messages[0]?.id, id, 'the answer carries the id whole');
  await gateway.close();
  const server = receiver.spans.find((span) => span.traceId === traceId && span.kind === SERVER);
  const exported = String(server?.attributes.find((attribute) => attribute.key === 'jsonrpc.request.id')?.value.stringValue);
  t.ok(exported.startsWith('big-xxx') && exported.length < 2_100, `clipped (${exported.length} chars)`);
  t.match(exported, /\[\d+ more chars\]$/, 'says how much went');
});

t.test("a client's made-up methods do not name spans: one name for them all, the method itself a clipped attribute", async (t) => {
  const receiver = await otlpReceiver(t);
  const gateway = await startGateway({ otlpEndpoint: receiver.url });
  const traceId = hex(16);
  const methods = ['made/up-1', 'made/up-2', `made/up-${'y'.repeat(10_000)}`];
  const client = await gateway.client();
  for (const method of methods) await client.request({ method, params: { _meta: { traceparent: `00-${traceId}-${hex(8)}-01` } } }, EmptyResultSchema).catch(() => undefined);
  await gateway.close();
  const servers = receiver.spans.filter((span) => span.traceId === traceId && span.kind === SERVER);
  t.equal(servers.length, methods.length, 'each request traced');
  t.same([...new Set(servers.map((span) => span.name))], ['other'], "one span name, as the metrics' method label (a name per method would grow a tracing backend's index without bound)");
  const named = servers.map((span) => String(span.attributes.find((attribute) => attribute.key === 'mcp.method.name')?.value.stringValue));
  t.same(named.slice(0, 2), methods.slice(0, 2), 'the method itself in mcp.method.name');
  t.match(named[2], /^made\/up-y+… \[\d+ more chars\]$/, 'clipped');
});

t.test('huge request ids are not kept alive by their spans while an export waits on a silent collector', async (t) => {
  const silent = createServer(() => undefined);
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    silent.closeAllConnections();
    silent.close();
  });
  const gateway = await startGateway({ otlpEndpoint: `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1/traces` });
  t.teardown(() => gateway.close());
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const idChars = 8 * 1024 * 1024;
  const requests = 12;
  await modernPost(gateway, 'tools/list', {}, {}, 'warm-up');
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < requests; i++) await modernPost(gateway, 'tools/list', {}, {}, `${i}-${'x'.repeat(idChars)}`);
  gc();
  const grown = process.memoryUsage().heapUsed - before;
  t.ok(grown < (requests * idChars) / 2, `the heap grew ${Math.round(grown / 1048576)} MB for ${requests} ids of ${idChars / 1048576} MB`);
});

/** A daemon that read OTEL_TRACES_SAMPLER(_ARG) from its environment at start, as `coffer serve` does. */
async function sampledGateway(otlpEndpoint: string, sampler: string, arg: string): Promise<Gateway> {
  const saved = { OTEL_TRACES_SAMPLER: process.env.OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG: process.env.OTEL_TRACES_SAMPLER_ARG };
  Object.assign(process.env, { OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: arg });
  try {
    return await startGateway({ otlpEndpoint });
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

/** What the upstream received for a call with this client context (none: a call of its own). */
async function upstreamContext(client: Client, traceparent?: string): Promise<{ traceId: string; sampled: boolean }> {
  const seen = (await client.callTool({ name: 'local__trace', arguments: {}, ...(traceparent ? { _meta: { traceparent } } : {}) })).structuredContent as { meta: { traceparent: string } };
  const [, traceId, , flags] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(seen.meta.traceparent) ?? [];
  return { traceId: traceId!, sampled: flags === '01' };
}

t.test('OTEL_TRACES_SAMPLER=parentbased_traceidratio, ratio 0: no trace of its own is kept, a sampled parent still is', async (t) => {
  const receiver = await otlpReceiver(t);
  const gateway = await sampledGateway(receiver.url, 'parentbased_traceidratio', '0');
  await gateway.addServer(stdioFixture('local', TRACE_TOOL));
  const client = await gateway.client();

  const own = await upstreamContext(client);
  t.equal(own.sampled, false, 'the upstream is told its request is not sampled');
  const sampledParent = hex(16);
  t.same(await upstreamContext(client, `00-${sampledParent}-${hex(8)}-01`), { traceId: sampledParent, sampled: true }, 'a sampled parent is followed');
  const unsampledParent = hex(16);
  t.same(await upstreamContext(client, `00-${unsampledParent}-${hex(8)}-00`), { traceId: unsampledParent, sampled: false }, 'so is an unsampled one');

  await gateway.close(); // flushes the batch
  t.same([...new Set(receiver.spans.map((span) => span.traceId))], [sampledParent], "only the sampled parent's trace was exported");
  t.ok(receiver.spans.some((span) => span.kind === SERVER), 'with its request span');
  t.ok(receiver.spans.some((span) => span.kind === CLIENT), 'and its upstream request');
});

t.test('OTEL_TRACES_SAMPLER=traceidratio, ratio 0: nothing is exported, not even under a sampled parent', async (t) => {
  const receiver = await otlpReceiver(t);
  const gateway = await sampledGateway(receiver.url, 'traceidratio', '0');
  await gateway.addServer(stdioFixture('local', TRACE_TOOL));
  const client = await gateway.client();
  const parent = hex(16);
  t.same(await upstreamContext(client, `00-${parent}-${hex(8)}-01`), { traceId: parent, sampled: false }, 'the trace goes on, marked not sampled');
  await upstreamContext(client);
  await gateway.close();
  t.same(receiver.spans, [], 'no span exported');
});

t.test('no endpoint: no spans, the client context reaches the upstream unchanged', async (t) => {
  const fixture = await startNetworkFixture('http', TRACE_TOOL);
  t.teardown(() => fixture.kill());
  const gateway = await startGateway({ otlpEndpoint: null });
  t.teardown(() => gateway.close());
  await gateway.addServer(networkConfig('up', 'http', fixture.url));
  const client = await gateway.client();
  const traceparent = `00-${hex(16)}-${hex(8)}-01`;
  const seen = (await client.callTool({ name: 'up__trace', arguments: {}, _meta: { traceparent } })).structuredContent as { meta: { traceparent: string }; headers: { traceparent: string } };
  t.equal(seen.meta.traceparent, traceparent);
  t.equal(seen.headers.traceparent, traceparent, 'and in the header of an HTTP upstream');

  // A line break in a header value fails the whole request: such a traceparent is none (W3C: the trace starts anew).
  for (const [what, broken] of [['a line feed after', `${traceparent}\n`], ['U+2028 after', `${traceparent}\u2028`], ['a space before', ` ${traceparent}`]] as const) {
    const answer = await client.callTool({ name: 'up__trace', arguments: {}, _meta: { traceparent: broken } });
    const got = answer.structuredContent as { meta: { traceparent: string }; headers: { traceparent: string | null } } | undefined;
    t.equal(got?.meta.traceparent, broken, `${what}: the call is made, _meta as the client sent it`);
    t.equal(got?.headers.traceparent, null, 'and no header');
  }
});
