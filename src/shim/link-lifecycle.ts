// The shim's link to the daemon: one Streamable HTTP session at a time. Made
// by a single connect loop that polls daemon.json with a capped backoff,
// re-initialised by the handshake replay before it carries anything, dropped
// when a send or a stream says the daemon is gone or was replaced, and ended
// politely on close. Each new link has a new generation, so what belonged to
// an old session can be told apart.
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { transportFetch } from './transport-fetch.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DaemonStarter } from './daemon-start.js';
import type { HandshakeReplay } from './handshake.js';

/** A ready daemon's /mcp; `identity` changes when the daemon is restarted. */
export interface DaemonEndpoint {
  mcpUrl: URL;
  /** Presented as `Authorization: Bearer` on every request to /mcp. */
  token: string;
  /** Changes when the daemon restarts or its token is rotated: the link is then made again. */
  identity: string;
}

export interface Link {
  transport: StreamableHTTPClientTransport;
  generation: number;
  /** Where the link goes; 2026-07-28-era requests are POSTed there on their own (modern-post.ts). */
  endpoint: DaemonEndpoint;
}

export interface LinkOptions {
  /** The ready daemon of this home, or null. */
  locate(): Promise<DaemonEndpoint | null>;
  log(line: string): void;
}

export interface LinkEvents {
  message(link: Link, message: JSONRPCMessage): void;
  /** The link is open and re-initialised: send what waited. */
  up(link: Link): void;
  /** The link was dropped: settle what was in flight on it. */
  lost(link: Link): void;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 2_000;

export class LinkLifecycle {
  current: Link | null = null;
  private generation = 0;
  private connecting = false;
  private closed = false;

  constructor(
    private readonly options: LinkOptions,
    private readonly starter: DaemonStarter,
    private readonly handshake: HandshakeReplay,
    private readonly events: LinkEvents,
  ) {}

  /** One loop at a time, until a link is up; polls daemon.json with a capped backoff. */
  connect(mayStartDaemon: boolean): void {
    if (this.connecting || this.closed || this.current) return;
    this.connecting = true;
    void (async () => {
      let delay = RETRY_MIN_MS;
      while (!this.closed && !this.current) {
        try {
          let endpoint = await this.options.locate();
          if (!endpoint && mayStartDaemon) {
            mayStartDaemon = false;
            endpoint = await this.starter.start();
          }
          if (endpoint) await this.establish(endpoint);
        } catch (error) {
          this.options.log(`connecting: ${(error as Error).message}`);
        }
        if (this.current) break;
        await sleep(delay);
        delay = Math.min(delay * 2, RETRY_MAX_MS);
      }
      this.connecting = false;
    })();
  }

  /** The link is dead: drop it, let the relay settle what was in flight on it, and look for the daemon again. */
  lost(link: Link, why: string): void {
    if (link !== this.current) return;
    this.options.log(`link ${link.generation} to ${link.endpoint.identity} lost: ${why}`);
    this.current = null;
    link.transport.onerror = undefined;
    link.transport.onclose = undefined;
    // Aborts its streams; requests still being POSTed end up in the relay's failed sends.
    void link.transport.close();
    this.events.lost(link);
    this.connect(false);
  }

  /** A stream error: the daemon may be gone or restarted, or only one stream broke. */
  async check(link: Link): Promise<void> {
    const endpoint = await this.options.locate().catch(() => null);
    if (endpoint?.identity !== link.endpoint.identity) this.lost(link, endpoint ? 'the daemon was restarted' : 'the daemon is gone');
  }

  async close(): Promise<void> {
    this.closed = true;
    const link = this.current;
    this.current = null;
    if (link) {
      // Polite: frees the daemon-side session at once instead of at its idle timeout; a hung daemon does not hold us.
      await Promise.race([link.transport.terminateSession().catch(() => undefined), sleep(1_000)]);
      await link.transport.close();
    }
  }

  /** Opens a session, replays the client's handshake (answer swallowed), then hands the link to the relay. */
  private async establish(endpoint: DaemonEndpoint): Promise<void> {
    const link: Link = {
      transport: new StreamableHTTPClientTransport(endpoint.mcpUrl, {
        requestInit: { headers: { authorization: `Bearer ${endpoint.token}` } },
        fetch: transportFetch,
        // The shim itself reconnects; the transport's own retries would only hit a dead session.
        reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
      }),
      generation: ++this.generation,
      endpoint,
    };
    link.transport.onmessage = (message) => this.events.message(link, message);
    link.transport.onerror = (error) => {
      if (link !== this.current) return;
      this.options.log(`link ${link.generation}: ${error.message}`);
      void this.check(link);
    };
    try {
      await link.transport.start();
      await this.handshake.replay(link.transport, link.generation);
    } catch (error) {
      await link.transport.close();
      throw error;
    }
    this.current = link;
    this.options.log(`link ${link.generation} to ${link.endpoint.identity} open (session ${link.transport.sessionId ?? 'none'})`);
    this.events.up(link);
  }
}
