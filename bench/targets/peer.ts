// The peer gateway, mcp-hub, from node_modules: one process per upstream set
// (it reads its servers from a config file at start). It exposes its unified
// endpoint as legacy SSE only (GET /mcp + POST /messages), so its measuring
// client speaks SSE. Kept on loopback: a preload binds it to 127.0.0.1,
// its marketplace catalogue is pre-seeded (it would fetch it from the
// internet), and PATH holds only node (its fetch fallback shells out to curl).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../free-port.js';
import { rssMb, startChild, waitFor, type Child } from '../proc.js';
import type { UpstreamSpec } from './coffer.js';
import { LOOPBACK_PRELOAD, MCP_HUB_CLI } from './paths.js';

export interface Peer {
  pid: number;
  mcpUrl: string;
  rss(): number;
  /** Servers mcp-hub reports as connected. */
  connected(): Promise<number>;
  /** Waits for state ready and `count` connected servers; false when the bound passed first. */
  waitReady(count: number, timeoutMs: number): Promise<boolean>;
  stop(): Promise<void>;
}

export async function startPeer(specs: UpstreamSpec[]): Promise<Peer> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-hub-bench-'));
  const mcpServers: Record<string, unknown> = {};
  for (const spec of specs) mcpServers[spec.name] = spec.url ? { url: spec.url } : { command: spec.stdio!.command, args: spec.stdio!.args };
  const configFile = join(dir, 'mcp-servers.json');
  writeFileSync(configFile, JSON.stringify({ mcpServers }));
  const data = join(dir, 'data');
  mkdirSync(join(data, 'mcp-hub', 'cache'), { recursive: true });
  writeFileSync(
    join(data, 'mcp-hub', 'cache', 'registry.json'),
    JSON.stringify({ registry: { version: 'bench', generatedAt: Date.now(), totalServers: 1, servers: [{ id: 'none', name: 'none' }] }, lastFetchedAt: Date.now(), serverDocumentation: {} }),
  );
  const port = await freePort();
  let child: Child;
  try {
    child = await startChild(process.execPath, ['--import', LOOPBACK_PRELOAD, MCP_HUB_CLI, '--port', String(port), '--config', configFile], {
      waitForHello: false,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        HOME: dir,
        XDG_DATA_HOME: data,
        XDG_STATE_HOME: join(dir, 'state'),
        XDG_CONFIG_HOME: join(dir, 'config'),
        PATH: dirname(process.execPath),
        NODE_ENV: 'production',
      },
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const base = `http://127.0.0.1:${port}`;
  const health = async (): Promise<any> => {
    try {
      const response = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(5_000) });
      return response.ok ? await response.json() : null;
    } catch {
      return null;
    }
  };
  const connected = async () => ((await health())?.servers ?? []).filter((server: any) => server.status === 'connected').length;
  return {
    pid: child.pid,
    mcpUrl: `${base}/mcp`,
    rss: () => rssMb(child.pid),
    connected,
    async waitReady(count, timeoutMs) {
      try {
        await waitFor(
          `mcp-hub ready with ${count} servers`,
          async () => {
            const state = await health();
            return state?.state === 'ready' && (state.servers ?? []).filter((server: any) => server.status === 'connected').length >= count;
          },
          timeoutMs,
          100,
        );
        return true;
      } catch {
        return false;
      }
    },
    async stop() {
      await child.stop(3_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
