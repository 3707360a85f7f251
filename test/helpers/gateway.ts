// Test harness: a real coffer daemon in this process (temporary COFFER_HOME,
// a free port), its REST API with the token, and real SDK clients over HTTP.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startDaemon, type DaemonOptions, type RunningDaemon } from '../../src/daemon/daemon.js';
import { mcpTransport } from './mcp-post.js';
import { restCall, waitReady, type RestCall } from './rest.js';
import { sleep } from './wait.js';

export { waitFor } from './wait.js';

export interface Gateway {
  home: string;
  daemon: RunningDaemon;
  url: string;
  api: RestCall;
  /** An SDK client over /mcp (or `path`, e.g. /mcp/<toolset>); it presents the daemon's token unless `token` is given. */
  client(name?: string, capabilities?: Record<string, unknown>, token?: string, path?: string): Promise<Client>;
  /** Registers a server and waits until its actor is ready. */
  addServer(config: object): Promise<void>;
  /**
   * An upstream's actor log once it shows `showing`, or as it stands after 10 s: the actor
   * writes its log asynchronously, so a note can land just after the state it explains.
   */
  actorLog(server: string, showing: string | RegExp): Promise<string>;
  close(): Promise<void>;
}

/** A gateway closed at the test's end, with these servers registered and ready. */
export async function gatewayWith(t: { teardown(fn: () => unknown): void }, servers: object[], options: Partial<DaemonOptions> = {}): Promise<Gateway> {
  const gateway = await startGateway(options);
  t.teardown(() => gateway.close());
  for (const server of servers) await gateway.addServer(server);
  return gateway;
}

export function tempHome(prefix = 'coffer-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}


export async function startGateway(options: Partial<DaemonOptions> = {}, home = tempHome()): Promise<Gateway> {
  const daemon = await startDaemon({ home, port: 0, logToStderr: false, ...options });
  const url = `http://127.0.0.1:${daemon.port}`;
  const clients: Client[] = [];
  const api: RestCall = (method, path, body, token = daemon.token) => restCall(url, token, method, path, body);
  return {
    home,
    daemon,
    url,
    api,
    async client(name = 'test-client', capabilities = {}, token = daemon.token, path = '/mcp') {
      const client = new Client({ name, version: '1.0.0' }, { capabilities });
      await client.connect(mcpTransport(url, token, {}, path));
      clients.push(client);
      return client;
    },
    async addServer(config: object) {
      const name = String((config as { name?: unknown }).name);
      const created = await api('POST', '/servers', config);
      if (created.status !== 201) throw new Error(`register failed: ${JSON.stringify(created.body)}`);
      await waitReady(api, name);
    },
    async actorLog(server: string, showing: string | RegExp) {
      const read = (): string => readFileSync(join(home, 'logs', 'upstreams', `${server}.log`), 'utf8');
      const shows = (text: string): boolean => (typeof showing === 'string' ? text.includes(showing) : showing.test(text));
      for (const until = Date.now() + 10_000; !shows(read()) && Date.now() < until; ) await sleep(50);
      return read();
    },
    async close() {
      await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
      await daemon.stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
