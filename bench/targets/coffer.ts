// coffer under test: the daemon in a child process (bench/daemon-runner.ts),
// its REST API, registration of many upstreams and the wait until their actors
// are ready. The child's RSS (worker threads included) is readable from /proc.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { restCall } from '../../test/helpers/rest.js';
import type { McpEndpoint } from '../clients.js';
import { rssMb, startChild, waitFor, type Child } from '../proc.js';
import { DAEMON_RUNNER } from './paths.js';

export interface UpstreamSpec {
  name: string;
  /** Streamable HTTP URL, or a stdio command. */
  url?: string;
  stdio?: { command: string; args: string[] };
  listDeadlineMs?: number;
  /** The era spoken to it (the server setting `protocol`); auto when absent. */
  protocol?: string;
}

export interface CofferOptions {
  home?: string;
  tuning?: Record<string, number>;
  /** Write a V8 CPU profile of the daemon process into this folder when it stops. */
  cpuProfDir?: string;
  /** Node and V8 options of the daemon process (V8's apply to every actor isolate too), for A/B runs of engine settings. */
  nodeArgs?: string[];
  /** Set in the daemon's environment (COFFER_METRICS, OTEL_EXPORTER_OTLP_ENDPOINT, ...). */
  env?: Record<string, string>;
}

function configOf(spec: UpstreamSpec): Record<string, unknown> {
  const transport = spec.url
    ? { type: 'http', url: spec.url, headers: {} }
    : { type: 'stdio', command: spec.stdio!.command, args: spec.stdio!.args, env: {}, cwd: null };
  // connect_ms stays at the default 30 s: hundreds of actor workers starting at once on 2 cores
  // need that long, and a shorter bound sends them into reconnect backoff instead of measuring them.
  const timeouts = { connect_ms: 30_000, request_ms: 30_000, list_deadline_ms: spec.listDeadlineMs ?? 2_000 };
  return { name: spec.name, transport, timeouts, ...(spec.protocol ? { protocol: spec.protocol } : {}) };
}

export class Coffer {
  private constructor(
    readonly home: string,
    private readonly options: CofferOptions,
    private child: Child,
    readonly ownsHome: boolean,
  ) {}

  static async start(options: CofferOptions = {}): Promise<Coffer> {
    const ownsHome = options.home === undefined;
    const home = options.home ?? mkdtempSync(join(tmpdir(), 'coffer-bench-'));
    return new Coffer(home, options, await Coffer.spawn(home, options), ownsHome);
  }

  private static spawn(home: string, options: CofferOptions): Promise<Child> {
    const execArgv = [...(options.nodeArgs ?? []), ...(options.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', options.cpuProfDir] : [])];
    return startChild(process.execPath, [...execArgv, DAEMON_RUNNER, '--home', home, '--tuning', JSON.stringify(options.tuning ?? {})], { env: { ...process.env, ...options.env } });
  }

  get pid(): number {
    return this.child.pid;
  }
  get port(): number {
    return this.child.hello.port as number;
  }
  get token(): string {
    return this.child.hello.token as string;
  }
  /** /mcp and the token it wants (the daemon's own, as the shim presents it). */
  get mcp(): McpEndpoint {
    return { url: `http://127.0.0.1:${this.port}/mcp`, token: this.token };
  }

  rss(): number {
    return rssMb(this.pid);
  }

  async api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    // Generous: with hundreds of actor workers starting, the daemon's main thread answers late.
    return restCall(`http://127.0.0.1:${this.port}`, this.token, method, path, body, 120_000);
  }

  /** Registers upstreams, a few at a time (each one starts an actor worker). */
  async register(specs: UpstreamSpec[], concurrency = 8): Promise<void> {
    let next = 0;
    const worker = async () => {
      while (next < specs.length) {
        const spec = specs[next++]!;
        const created = await this.api('POST', '/servers', configOf(spec));
        if (created.status !== 201) throw new Error(`register ${spec.name}: ${created.status} ${JSON.stringify(created.body)}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, specs.length) }, worker));
  }

  /**
   * Number of upstreams whose actor is ready: the daemon's status counts them.
   * (GET /servers describes every server in full; polled at 200 upstreams it took
   * much of the main thread the start being timed needs.)
   */
  async readyCount(): Promise<number> {
    const status = await this.api('GET', '/daemon/status');
    return status.body?.upstreams?.healthy ?? 0;
  }

  async waitReady(count: number, timeoutMs: number): Promise<void> {
    // A slow answer of a starved main thread is "not yet", not a failure: only the deadline fails.
    await waitFor(`${count} upstreams ready in coffer`, async () => (await this.readyCount().catch(() => 0)) >= count, timeoutMs, 100);
  }

  /** Stops the daemon and starts a new one on the same home: every cache is gone, registrations stay. */
  async restart(): Promise<void> {
    await this.halt();
    await this.resume();
  }

  /** Stops the daemon and keeps its home, for resume() to start it again. */
  async halt(): Promise<void> {
    await this.child.stop();
  }

  async resume(): Promise<void> {
    this.child = await Coffer.spawn(this.home, this.options);
  }

  async stop(): Promise<void> {
    await this.child.stop();
    if (this.ownsHome) rmSync(this.home, { recursive: true, force: true });
  }
}
