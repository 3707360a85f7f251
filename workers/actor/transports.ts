// Builds the SDK client transport a server's config asks for. Each transport is
// imported only when needed, so an actor loads one of them, not all three.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { TransportConfig } from '../../src/protocol/server-config.js';
import { childEnv } from './child-env.js';
import type { ActorLog } from './log.js';

export interface UpstreamTransport {
  transport: Transport;
  /** The child's pid for stdio, null otherwise. */
  pid(): number | null;
  /** Streamable HTTP: tells the upstream to drop the session (DELETE), so it does not keep it until it times out. */
  endSession?(): Promise<void>;
}

export async function createTransport(config: TransportConfig, log: ActorLog): Promise<UpstreamTransport> {
  switch (config.type) {
    case 'stdio': {
      const { StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args,
        env: childEnv(process.env, config.env),
        cwd: config.cwd ?? undefined,
        stderr: 'pipe',
      });
      transport.stderr?.pipe(log.stream, { end: false });
      return { transport, pid: () => transport.pid };
    }
    case 'http': {
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
      const transport = new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
      return { transport, pid: () => null, endSession: () => transport.terminateSession() };
    }
    case 'sse': {
      const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
      const transport = new SSEClientTransport(new URL(config.url), { requestInit: { headers: config.headers } });
      return { transport, pid: () => null };
    }
  }
}
