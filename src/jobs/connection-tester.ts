// Runs R9's test connection as a piscina job, bounded: a job that outlives
// the server's connect timeout (plus a margin) is aborted and reported failed.
import { join } from 'node:path';
import { Piscina } from 'piscina';
import { workerFile } from '../paths.js';
import { messageOf } from '../protocol/errors.js';
import type { TestConnectionReport, TestConnectionTask } from '../protocol/jobs.js';
import { signsInWithOAuth, usableAccessToken, type OAuthRecord } from '../protocol/oauth.js';
import type { ServerConfig } from '../protocol/server-config.js';

const MARGIN_MS = 2_000;

export class ConnectionTester {
  private readonly pool = new Piscina<TestConnectionTask, TestConnectionReport>({
    filename: workerFile('jobs/test-connection.js'),
    minThreads: 0,
    maxThreads: 2,
    idleTimeout: 30_000,
  });

  constructor(
    private readonly logDir: string,
    /** A server's stored OAuth state (sealed at rest; read only to hand the job its access token). */
    private readonly oauthRecord: (server: string) => Promise<OAuthRecord | null> = async () => null,
  ) {}

  async test(config: ServerConfig): Promise<TestConnectionReport> {
    const started = Date.now();
    const signal = AbortSignal.timeout(config.timeouts.connect_ms + MARGIN_MS);
    try {
      const task: TestConnectionTask = { config, logFile: join(this.logDir, `${config.name}.log`) };
      if (signsInWithOAuth(config.transport)) task.oauth = { accessToken: usableAccessToken(await this.oauthRecord(config.name), config.transport.url, Date.now()) };
      return await this.pool.run(task, { signal });
    } catch (error) {
      return {
        ok: false,
        latency_ms: Date.now() - started,
        protocol_version: null,
        server_info: null,
        capabilities: null,
        error: signal.aborted
          ? { code: 'UPSTREAM_TIMEOUT', message: `test connection took longer than ${config.timeouts.connect_ms} ms` }
          : { code: 'UPSTREAM_UNAVAILABLE', message: messageOf(error) },
      };
    }
  }

  close(): Promise<void> {
    return this.pool.close({ force: true });
  }
}
