// Handshake replay: a new daemon session must be initialised before it takes
// anything, but the client initialised only once. So the client's own
// `initialize` (once answered) is sent again on every later link under an id
// of the shim's, its answer kept from the client, and `initialized` follows
// if the client had sent it.
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isJSONRPCNotification, isJSONRPCResultResponse, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

const REINIT_ID_PREFIX = 'coffer-shim-reinit-';
const REINIT_TIMEOUT_MS = 30_000;

export class HandshakeReplay {
  /** The client's `initialize`, once answered. */
  private initialize: JSONRPCRequest | null = null;
  private initializedSeen = false;
  private readonly waiters = new Map<string, (message: JSONRPCMessage) => void>();

  /** A notification from the client. */
  clientNotified(method: string): void {
    if (method === 'notifications/initialized') this.initializedSeen = true;
  }

  /** A daemon answer to a client request: an answered `initialize` is kept for replays. */
  answered(request: JSONRPCRequest, answer: JSONRPCMessage, transport: StreamableHTTPClientTransport): void {
    if (request.method !== 'initialize' || !isJSONRPCResultResponse(answer)) return;
    this.initialize = request;
    transport.setProtocolVersion(String(answer.result.protocolVersion));
  }

  /** True when `message` answers a replayed initialize: it is consumed here, never shown to the client. */
  claim(message: JSONRPCMessage): boolean {
    const id = (message as { id?: unknown }).id;
    const waiter = typeof id === 'string' ? this.waiters.get(id) : undefined;
    if (!waiter) return false;
    waiter(message);
    return true;
  }

  /** A queued `initialized` is not resent once a handshake is known: the replay sends it. */
  replaysItself(message: JSONRPCMessage): boolean {
    return isJSONRPCNotification(message) && message.method === 'notifications/initialized' && this.initialize !== null;
  }

  /** Re-initialises a fresh session; nothing to do before the client's first handshake. */
  async replay(transport: StreamableHTTPClientTransport, generation: number): Promise<void> {
    if (!this.initialize) return;
    const id = `${REINIT_ID_PREFIX}${generation}`;
    const answered = new Promise<JSONRPCMessage>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no answer to the replayed initialize')), REINIT_TIMEOUT_MS);
      this.waiters.set(id, (message) => {
        clearTimeout(timer);
        resolve(message);
      });
    });
    try {
      await transport.send({ ...this.initialize, id });
      const answer = await answered;
      if (!isJSONRPCResultResponse(answer)) throw new Error(`the replayed initialize failed: ${JSON.stringify(answer)}`);
      transport.setProtocolVersion(String(answer.result.protocolVersion));
      if (this.initializedSeen) await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    } finally {
      this.waiters.delete(id);
    }
  }
}
