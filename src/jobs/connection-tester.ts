// Runs R9's test connection as a piscina job, bounded: a job that outlives
// the server's connect timeout and the close of its connection is aborted and
// reported failed. Aborting ends the job's thread, and a stdio child it spawned
// would outlive it: the job's own bounds come first, and its time runs from
// its start (a test waits for a free thread here, never in piscina's queue,
// where its time would run out before it starts). A job tells each child's pid
// as it spawns it: a job ended from outside (its abort, the daemon's stop)
// has its children killed here.
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { workerFile } from '../paths.js';
import { killChild } from '../supervision/kill-child.js';
import { Slots } from '../supervision/slots.js';
import { CofferError, messageOf, type ErrorBody } from '../protocol/errors.js';
import type { TestConnectionReport, TestConnectionTask } from '../protocol/jobs.js';
import { signsInWithOAuth, usableAccessToken, type OAuthRecord } from '../protocol/oauth.js';
import type { ServerConfig } from '../protocol/server-config.js';

const THREADS = 2;
/**
 * A job ends itself first: its connect_ms, then its connection's close (a stdio
 * child gets stdin EOF, SIGTERM after 2 s, SIGKILL after 2 s more; an HTTP
 * session up to 1 s to end), on a thread that may still be starting (seconds,
 * on a loaded machine). The abort is for a job hung past all that.
 */
const MARGIN_MS = 20_000;

const failed = (started: number, error: ErrorBody): TestConnectionReport => ({ ok: false, latency_ms: Date.now() - started, protocol_version: null, server_info: null, capabilities: null, error });

export class ConnectionTester {
  private readonly pool = new Piscina<TestConnectionTask, TestConnectionReport>({
    filename: workerFile('jobs/test-connection.js'),
    minThreads: 0,
    maxThreads: THREADS,
    idleTimeout: 30_000,
  });
  /** A test takes a thread before its time starts running (see above). */
  private readonly threads = new Slots(THREADS);
  /** The stdio children of the tests running now. */
  private readonly children = new Set<number>();

  constructor(
    private readonly logDir: string,
    /** A server's stored OAuth state (sealed at rest; read only to hand the job its access token). */
    private readonly oauthRecord: (server: string) => Promise<OAuthRecord | null> = async () => null,
  ) {}

  async test(config: ServerConfig): Promise<TestConnectionReport> {
    const started = Date.now();
    const connectMs = config.timeouts.connect_ms;
    const release = await this.threads.acquireWithin(connectMs);
    if (!release) return failed(started, { code: 'UPSTREAM_BUSY', message: `${THREADS} test connections were running for all of ${connectMs} ms: retry when one has finished` });
    const signal = AbortSignal.timeout(connectMs + MARGIN_MS);
    const { port1, port2 } = new MessageChannel();
    // Two, when a 2025-era server exits on the 2026 probe and is started again.
    const mine = new Set<number>();
    port1.on('message', (pid: number) => {
      mine.add(pid);
      this.children.add(pid);
    });
    try {
      const task: TestConnectionTask = { config, logFile: join(this.logDir, `${config.name}.log`), pids: port2 };
      if (signsInWithOAuth(config.transport)) task.oauth = { accessToken: usableAccessToken(await this.oauthRecord(config.name), config.transport.url, Date.now()) };
      const report = await this.pool.run(task, { signal, transferList: [port2] });
      // The job closed its connections, which ended their children.
      for (const pid of mine) this.children.delete(pid);
      return report;
    } catch (error) {
      return failed(
        started,
        signal.aborted
          ? { code: 'UPSTREAM_TIMEOUT', message: `test connection took longer than ${connectMs} ms` }
          : error instanceof CofferError
            ? error.toBody()
            : { code: 'UPSTREAM_UNAVAILABLE', message: messageOf(error) },
      );
    } finally {
      port1.close();
      for (const pid of mine) if (this.children.delete(pid)) killChild(pid);
      release();
    }
  }

  /**
   * Ends the running tests at once: their threads, then their children.
   * (piscina's close, even forced, waits up to its close timeout for running
   * tasks and then rejects: a stop during a test would hang, then fail.)
   */
  async close(): Promise<void> {
    await this.pool.destroy();
    for (const child of this.children) killChild(child);
    this.children.clear();
  }
}
