// coffer's Prometheus metrics (prom-client, its own registry). Events are
// counted as they happen through the hooks below, each a lookup in a small map
// and an add (hot-series.ts); everything that is state (upstream health, sessions,
// bytes in flight, child memory) is read only when scraped. Labels are
// bounded: server names (registered by the operator, forgotten when removed), fixed outcome and method
// sets, never tool names.
import { Counter, Gauge, Registry } from 'prom-client';
import type { ActorHeap, ActorState, ActorStatus } from '../protocol/actor.js';
import type { InvocationRecord } from '../protocol/events.js';
import { counterSeries, histogramSeries } from './hot-series.js';
import { requestMethodLabel, requestOutcomeLabel } from './metric-labels.js';
import { registerProcessMetrics } from './process-metrics.js';

/** What the scrape reads; each is called once per scrape. */
export interface MetricSources {
  statuses(): ActorStatus[];
  degraded(): string[];
  /** Forwarded calls and their request bytes in flight to one upstream. */
  inFlight(server: string): { calls: number; bytes: number };
  /** Protocol versions of the open sessions (null: not negotiated yet). */
  sessionVersions(): Iterable<string | null>;
  /** Resident bytes of an upstream's child process, or null when unknown (not stdio, not Linux). */
  childRss(pid: number): Promise<number | null>;
  /** Each actor's V8 heap; an actor that does not answer in time is left out (the scrape must not wait on it). */
  actorHeaps(): Promise<{ server: string; heap: ActorHeap }[]>;
  writerUp(): boolean;
}

const ACTOR_STATES: readonly ActorState[] = ['connecting', 'ready', 'backoff', 'failed', 'stopped'];
/** Calls answered by coffer alone take tens of µs; a hung upstream's take its request timeout. */
const CALL_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const DB_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1, 5];
/** The first revision of each era: a session's era is the latest one not after its protocol version. */
const ERAS = ['2026-07-28', '2025-11-25'] as const;

export function protocolEra(version: string | null): string {
  return ERAS.find((era) => version !== null && version >= era) ?? ERAS[ERAS.length - 1]!;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  private sources: MetricSources | null = null;
  /** Servers that were ready once: their next ready is a reconnect. */
  private readonly wasReady = new Set<string>();
  private dbQueue = 0;

  private readonly calls = counterSeries({ name: 'coffer_upstream_calls_total', help: 'Routed calls (tools/call, resources/read, prompts/get) by upstream and outcome', labelNames: ['server', 'outcome'], registry: this.registry });
  private readonly callSeconds = histogramSeries({ name: 'coffer_upstream_call_duration_seconds', help: 'Routed call latency, from routing to the answer', labelNames: ['server'], registry: this.registry }, CALL_BUCKETS);
  private readonly listSeconds = histogramSeries({ name: 'coffer_upstream_list_duration_seconds', help: "A list asked of an upstream's actor, until its answer", labelNames: ['server'], registry: this.registry }, CALL_BUCKETS);
  private readonly listMisses = new Counter({ name: 'coffer_upstream_list_deadline_misses_total', help: 'Lists an upstream did not answer within its list deadline (it was left out)', labelNames: ['server'], registers: [this.registry] });
  private readonly listCache = counterSeries({ name: 'coffer_upstream_list_cache_total', help: "A client's list, per upstream: answered from a cached copy (hit) or by asking the upstream (miss)", labelNames: ['server', 'result'], registry: this.registry });
  private readonly reconnects = new Counter({ name: 'coffer_upstream_reconnects_total', help: 'Times an upstream became ready again after losing its connection', labelNames: ['server'], registers: [this.registry] });
  private readonly requests = counterSeries({ name: 'coffer_mcp_requests_total', help: 'JSON-RPC requests on /mcp by method and outcome (ok, a coffer error code, or the JSON-RPC error kind)', labelNames: ['method', 'outcome'], registry: this.registry });
  private readonly dbSeconds = histogramSeries({ name: 'coffer_db_writer_call_duration_seconds', help: 'DB writer calls (writes and reads), from the call to its answer', labelNames: ['call'], registry: this.registry }, DB_BUCKETS);

  constructor() {
    registerProcessMetrics(this.registry);
    const registers = [this.registry];
    const read = (): MetricSources | null => this.sources;
    new Gauge({
      name: 'coffer_upstream_state',
      help: 'The connection state of each enabled upstream (1 for its current state)',
      labelNames: ['server', 'state'],
      registers,
      collect() {
        this.reset();
        for (const status of read()?.statuses() ?? []) for (const state of ACTOR_STATES) this.set({ server: status.server, state }, status.state === state ? 1 : 0);
      },
    });
    new Gauge({
      name: 'coffer_upstream_degraded',
      help: 'Upstreams left out of some list until they answer again (1)',
      labelNames: ['server'],
      registers,
      collect() {
        this.reset();
        for (const server of read()?.degraded() ?? []) this.set({ server }, 1);
      },
    });
    const perUpstream = (name: string, help: string, value: (sources: MetricSources, server: string) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['server'],
        registers,
        collect() {
          this.reset();
          const sources = read();
          for (const status of sources?.statuses() ?? []) this.set({ server: status.server }, value(sources!, status.server));
        },
      });
    };
    perUpstream('coffer_upstream_in_flight_calls', 'Calls forwarded to an upstream and not answered yet', (sources, server) => sources.inFlight(server).calls);
    perUpstream('coffer_upstream_in_flight_request_bytes', 'About the size of the requests in flight to an upstream (capped per upstream and overall)', (sources, server) => sources.inFlight(server).bytes);
    new Gauge({
      name: 'coffer_upstream_process_resident_memory_bytes',
      help: "Resident memory of a stdio upstream's child process (Linux)",
      labelNames: ['server'],
      registers,
      async collect() {
        this.reset();
        const sources = read();
        const children = (sources?.statuses() ?? []).filter((status) => status.pid !== null);
        const sizes = await Promise.all(children.map((status) => sources!.childRss(status.pid!)));
        children.forEach((status, i) => sizes[i] !== null && this.set({ server: status.server }, sizes[i]!));
      },
    });
    // One question to the actors per scrape, shared by the three families (prom-client collects them all at once).
    let heaps: ReturnType<MetricSources['actorHeaps']> | null = null;
    const readHeaps = (): ReturnType<MetricSources['actorHeaps']> => {
      const sources = read();
      if (!sources) return Promise.resolve([]);
      return (heaps ??= sources.actorHeaps().finally(() => (heaps = null)));
    };
    const actorHeap = (name: string, help: string, value: (heap: ActorHeap) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['server'],
        registers,
        async collect() {
          const reports = await readHeaps();
          this.reset();
          for (const { server, heap } of reports) this.set({ server }, value(heap));
        },
      });
    };
    actorHeap('coffer_upstream_actor_heap_used_bytes', "V8 heap in use by an upstream's actor thread", (heap) => heap.used);
    actorHeap('coffer_upstream_actor_heap_total_bytes', "V8 heap allocated by an upstream's actor thread", (heap) => heap.total);
    actorHeap('coffer_upstream_actor_heap_limit_bytes', "The most an upstream's actor thread's V8 heap may grow to", (heap) => heap.limit);
    new Gauge({
      name: 'coffer_mcp_sessions',
      help: 'Open /mcp sessions by protocol era (the first revision of the era)',
      labelNames: ['era'],
      registers,
      collect() {
        this.reset();
        for (const era of ERAS) this.set({ era }, 0);
        for (const version of read()?.sessionVersions() ?? []) this.inc({ era: protocolEra(version) });
      },
    });
    const writer = this;
    new Gauge({ name: 'coffer_db_writer_queue_depth', help: 'DB writer calls sent and not answered yet', registers, collect() { this.set(writer.dbQueue); } });
    new Gauge({ name: 'coffer_db_writer_up', help: 'A DB writer runs (0 between its death and its replacement)', registers, collect() { this.set(read()?.writerUp() ? 1 : 0); } });
  }

  /** The daemon's parts exist: the scrape reads them from now on. */
  observe(sources: MetricSources): void {
    this.sources = sources;
  }

  invocation(record: InvocationRecord): void {
    this.calls.of(record.server, record.status).value++;
    this.callSeconds.of(record.server).observe(record.duration_ms / 1000);
  }

  request(method: string, error: unknown): void {
    this.requests.of(requestMethodLabel(method), requestOutcomeLabel(error)).value++;
  }

  /** A client's list of one upstream: `seconds` null when a cached copy answered. */
  listed(server: string, seconds: number | null, cached: boolean): void {
    this.listCache.of(server, cached ? 'hit' : 'miss').value++;
    if (seconds !== null) this.listSeconds.of(server).observe(seconds);
  }

  listDeadlineMissed(server: string): void {
    this.listMisses.inc({ server });
  }

  upstreamState(server: string, state: ActorState): void {
    if (state !== 'ready') return;
    if (this.wasReady.has(server)) this.reconnects.inc({ server });
    else this.wasReady.add(server);
  }

  /** A removed server: its series would otherwise be kept for ever, one label set per server ever registered. */
  forget(server: string): void {
    for (const family of [this.calls, this.callSeconds, this.listSeconds, this.listCache]) family.forget('server', server);
    this.listMisses.remove({ server });
    this.reconnects.remove({ server });
    this.wasReady.delete(server);
  }

  /** A DB writer call starts; the function answers that it ended. */
  dbCall(call: string): () => void {
    this.dbQueue++;
    const started = performance.now();
    return () => {
      this.dbQueue--;
      this.dbSeconds.of(call).observe((performance.now() - started) / 1000);
    };
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
