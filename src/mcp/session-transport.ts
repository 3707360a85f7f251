// The SDK's Streamable HTTP server transport with a fast path for the common
// POST. The SDK answers every POST of requests with a ReadableStream-backed
// SSE Response, built from a Fetch Request, after validating each message with
// zod: about half of coffer's main-thread time per tools/call, and three
// socket writes per answer. `accept()` takes a POST the session registry has
// already checked and answers it through a PostExchange (JSON when it can,
// SSE when it must). Everything else — initialize, GET streams, DELETE, and
// any POST the fast path does not take — stays with the SDK, and so does
// every message not related to a fast-path request (they go to the GET stream).
import { WebStandardStreamableHTTPServerTransport, type WebStandardStreamableHTTPServerTransportOptions } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { HttpReply } from '../http/reply.js';
import type { PlainMessages } from './plain-messages.js';
import { isResponse, PostExchange } from './post-exchange.js';

export class SessionTransport extends WebStandardStreamableHTTPServerTransport {
  /** Pending fast-path request id → the exchange that answers it. */
  private readonly exchanges = new Map<RequestId, PostExchange>();
  private readonly keepAliveMs: number;

  constructor(options: WebStandardStreamableHTTPServerTransportOptions & { keepAliveMs: number }) {
    super(options);
    this.keepAliveMs = options.keepAliveMs;
  }

  /**
   * Hands the messages of a checked POST on this initialized session to
   * onmessage, as the SDK would; notifications and responses alone get 202.
   */
  accept({ messages, requestIds }: PlainMessages, reply: HttpReply, headers: Record<string, string>): void {
    if (requestIds.length > 0) {
      const exchange = new PostExchange(requestIds, reply, this.sessionId, this.keepAliveMs, () => {
        for (const id of requestIds) if (this.exchanges.get(id) === exchange) this.exchanges.delete(id);
      });
      for (const id of requestIds) this.exchanges.set(id, exchange);
    }
    // The headers as read, not copied: the dispatcher only looks up the trace context in them.
    const extra = { requestInfo: { headers } };
    for (const message of messages) this.onmessage?.(message, extra);
    if (requestIds.length === 0) reply.send(202, {}, '');
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const id = isResponse(message) ? message.id : options?.relatedRequestId;
    const exchange = id === undefined ? undefined : this.exchanges.get(id);
    if (exchange === undefined) return super.send(message, options);
    exchange.deliver(message);
  }

  override async close(): Promise<void> {
    for (const exchange of new Set(this.exchanges.values())) exchange.abandon();
    this.exchanges.clear();
    await super.close();
  }
}
