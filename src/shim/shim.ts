// `coffer shim`: wires the client's stdio to a Relay toward this home's daemon.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { join } from 'node:path';
import { pipeline, type Readable, type Writable } from 'node:stream';
import { ensureHome } from '../daemon/daemon-file.js';
import { formatRecord, linesLostNote } from '../log-record.js';
import { appendRotating, LossTally } from '../rotating-file.js';
import { daemonUrl } from '../cli/api-client.js';
import { probeDaemon, startDaemonProcess } from '../cli/daemon-control.js';
import { EXIT, type ExitCode } from '../cli/exit-codes.js';
import { hashToken } from '../http/mcp-auth.js';
import { lineChunks } from './line-chunks.js';
import type { DaemonEndpoint } from './link-lifecycle.js';
import { Relay } from './relay.js';

/** Well above the SDK's 10 MB default: multi-MB tool arguments and results must pass. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
const DEFAULT_RECONNECT_BOUND_MS = 30_000;

/** stdout carries JSON-RPC only: diagnostics go to logs/shim.log (rotated by size), and to stderr with COFFER_DEBUG. */
export function shimLogger(home: string): (line: string) => void {
  const path = join(home, 'logs', 'shim.log');
  const losses = new LossTally(linesLostNote('shim'));
  return (line) => {
    const text = formatRecord({ level: 'info', component: 'shim', msg: line, fields: { pid: process.pid } });
    try {
      appendRotating(path, losses.note() + text);
      losses.said();
    } catch (error) {
      // Logging must never break the relay: the line is counted, and the next that goes through says so.
      losses.refused(1, error);
    }
    if (process.env.COFFER_DEBUG) process.stderr.write(text);
  };
}

/** The client's side: JSON-RPC lines on `stdin` and `stdout`, read in time linear in their size. */
export function stdioTransport(stdin: Readable, stdout: Writable): StdioServerTransport {
  // An unreadable stdin is reported by the transport (onerror); its end is the caller's to hear.
  return new StdioServerTransport(pipeline(stdin, lineChunks(MAX_MESSAGE_BYTES), () => undefined), stdout, { maxBufferSize: MAX_MESSAGE_BYTES });
}

/** `toolset`: relay to that toolset's endpoint, /mcp/<toolset>, instead of /mcp. */
async function locate(home: string, toolset: string | undefined): Promise<DaemonEndpoint | null> {
  const running = await probeDaemon(home);
  if (running?.status.status !== 'ready') return null;
  const { port, pid, started_at, token } = running.file;
  // A rotated token (a 401 on the next request) makes a new link with the new one; the log shows a fingerprint, never the token.
  const identity = `pid ${pid} port ${port} started ${started_at} token ${hashToken(token).slice(0, 8)}`;
  return { mcpUrl: new URL(`${daemonUrl(port)}/mcp${toolset === undefined ? '' : `/${toolset}`}`), token, identity };
}

function reconnectBoundMs(): number {
  const raw = Number(process.env.COFFER_SHIM_RECONNECT_MS);
  return Number.isFinite(raw) && raw > 0 ? raw : DEFAULT_RECONNECT_BOUND_MS;
}

export async function runShim({ home, toolset }: { home: string; toolset?: string }): Promise<ExitCode> {
  const tightened = ensureHome(home);
  const log = shimLogger(home);
  for (const note of tightened) log(note);
  const client = stdioTransport(process.stdin, process.stdout);
  const relay = new Relay({
    client,
    locate: () => locate(home, toolset),
    startDaemon: async () => {
      await startDaemonProcess(home);
    },
    reconnectBoundMs: reconnectBoundMs(),
    log,
  });
  // The client closing stdin (or killing us) ends the shim; so does a broken stdout or an unreadable stdin.
  const ended = new Promise<string>((resolve) => {
    client.onclose = () => resolve('stdio transport closed');
    process.stdin.once('end', () => resolve('stdin closed'));
    process.stdout.once('error', (error) => resolve(`stdout: ${error.message}`));
    process.once('SIGINT', () => resolve('SIGINT'));
    process.once('SIGTERM', () => resolve('SIGTERM'));
  });
  log(`started for ${home}`);
  await relay.start();
  log(`stopping: ${await ended}`);
  await relay.close();
  return EXIT.OK;
}
