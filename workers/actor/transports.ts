// Builds the message transport a server's config asks for: our own stdio,
// Streamable HTTP and legacy SSE transports (no SDK, no zod, no fetch). The
// network ones are imported only when needed.
import type { TransportConfig } from '../../src/protocol/server-config.js';
import { childEnv } from './child-env.js';
import type { HttpAuth } from './http-auth.js';
import type { JsonRpcMessage, MessageTransport } from './jsonrpc-session.js';
import type { ActorLog } from './log.js';

export interface UpstreamTransport {
  transport: MessageTransport;
  /** The child's pid for stdio, null otherwise. */
  pid(): number | null;
  /** Streamable HTTP: tells the upstream to drop the session (DELETE), so it does not keep it until it times out. */
  endSession?(): Promise<void>;
  /** Streamable HTTP, 2026-07-28 era: a subscriptions/listen request on its own long-lived stream. */
  listen?(message: JsonRpcMessage, signal: AbortSignal): Promise<void>;
}

/** `auth`: the OAuth hook of an HTTP/SSE upstream (null: static headers only). */
export async function createTransport(config: TransportConfig, log: ActorLog, auth: HttpAuth | null = null): Promise<UpstreamTransport> {
  switch (config.type) {
    case 'stdio': {
      const { StdioTransport } = await import('./stdio-transport.js');
      const transport = new StdioTransport({
        command: config.command,
        args: config.args,
        env: childEnv(process.env, config.env),
        cwd: config.cwd ?? undefined,
        stderr: log.childStderr(),
      });
      return { transport, pid: () => transport.pid };
    }
    case 'http': {
      const { createStreamableHttp } = await import('./streamable-http.js');
      const transport = await createStreamableHttp(config.url, config.headers, auth);
      return { transport, pid: () => null, endSession: () => transport.endSession(), listen: (message, signal) => transport.listen(message, signal) };
    }
    case 'sse': {
      const { createLegacySse } = await import('./legacy-sse.js');
      const transport = await createLegacySse(config.url, config.headers, auth);
      return { transport, pid: () => null };
    }
  }
}
