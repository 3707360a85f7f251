// Real upstream MCP servers for tests: @modelcontextprotocol/server-everything
// over stdio or Streamable HTTP, and a direct SDK client to compare against.
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { freePort } from '../../bench/free-port.js';
import { waitFor } from './gateway.js';

const require = createRequire(import.meta.url);
export const EVERYTHING_ENTRY = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist', 'index.js');
const LOOPBACK_PRELOAD = join(dirname(fileURLToPath(import.meta.url)), 'loopback-only.js');

export function everythingStdio(name: string): Record<string, unknown> {
  return { name, transport: { type: 'stdio', command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'] } };
}

export interface HttpUpstream {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything in Streamable HTTP mode, forced onto 127.0.0.1. */
export async function everythingHttp(): Promise<HttpUpstream> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', LOOPBACK_PRELOAD, EVERYTHING_ENTRY, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  await waitFor('server-everything HTTP to listen', () => log.includes('listening'), 20_000);
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      }),
  };
}

/** A client straight to server-everything over stdio: the reference for "unchanged". */
export async function directEverything(): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], stderr: 'ignore' }));
  return client;
}
