// The answer to one POST that carried requests. Nothing is written until the
// first message for it is ready: if that completes the answers, they go out as
// one `application/json` body (one write, and the cheapest thing for a client
// to read); if anything else comes first (a progress or logging notification,
// a server→client request sent with relatedRequestId) or a keep-alive is due,
// the answer becomes an SSE stream and carries every later message, ending
// with the last response. Both are what Streamable HTTP allows for a POST.
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { HttpReply } from '../http/reply.js';
import { JSONRPC, messageOf } from '../protocol/errors.js';
import { JsonText } from './json-text.js';

const KEEP_ALIVE = ': keepalive\n\n';

function sseEvent(json: string): string {
  return `event: message\ndata: ${json}\n\n`;
}

/**
 * A message as JSON, made once when it is delivered: what is held for a later
 * stream or batch is text, so no timer ever serialises. A result already
 * written as JSON is spliced in, not written again. A response that cannot
 * be serialised (one too deep for JSON.stringify) is answered with an error
 * instead; any other such message is dropped (null).
 */
export function serialise(message: JSONRPCMessage): string | null {
  try {
    // A result kept as text (a list page) goes in as it is: the response's own fields are its id alone.
    if ('result' in message && message.result instanceof JsonText) return `{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":${message.result.text}}`;
    return JSON.stringify(message);
  } catch (error) {
    if (!isResponse(message)) return null;
    const text = `coffer could not serialise this answer: ${messageOf(error)}`;
    return JSON.stringify({ jsonrpc: '2.0', id: message.id, error: { code: JSONRPC.INTERNAL_ERROR, message: text, data: { code: 'INTERNAL' } } });
  }
}

/** A response (its id is the request's), as opposed to a notification or request related to one. */
export function isResponse(message: JSONRPCMessage): message is JSONRPCMessage & { id: RequestId } {
  return 'id' in message && ('result' in message || 'error' in message);
}

export class PostExchange {
  /** The answers so far, as JSON. */
  private readonly answers = new Map<RequestId, string>();
  private streaming = false;
  private finished = false;
  private readonly keepAlive: NodeJS.Timeout;

  constructor(
    /** The POST's request ids, in order (a batch's JSON answer keeps it). */
    private readonly ids: readonly RequestId[],
    private readonly reply: HttpReply,
    private readonly sessionId: string | undefined,
    /**
     * A call still running after this long switches to SSE and sends comments:
     * the client then sees its answer started, and its HTTP stack's header and
     * body timeouts (undici: 300 s each) never cut a long call off.
     */
    keepAliveMs: number,
    private readonly onFinished: () => void,
  ) {
    this.keepAlive = setInterval(() => this.stream(KEEP_ALIVE), keepAliveMs);
    this.keepAlive.unref();
    reply.onAbort(() => clearInterval(this.keepAlive));
  }

  /** Sends one message that belongs to this POST (`status`: of a JSON answer); throws, like the SDK transport, when its client is gone. */
  deliver(message: JSONRPCMessage, status = 200): void {
    const response = isResponse(message);
    const json = serialise(message);
    if (response) this.answers.set(message.id, json!);
    const complete = response && this.answers.size === this.ids.length;
    if (this.reply.aborted) {
      if (complete) this.finish();
      throw new Error('the client closed the HTTP request before its answer');
    }
    if (json === null) return;
    if (this.streaming) this.reply.write(sseEvent(json), complete);
    else if (complete) this.reply.send(status, this.headers('application/json'), this.ids.length === 1 ? json : `[${this.ids.map((id) => this.answers.get(id)).join(',')}]`);
    // A batch's early answer waits for the others, unless something else starts a stream.
    else if (!response) this.stream(sseEvent(json));
    if (complete) this.finish();
  }

  /** The session closed before every answer was sent: end the stream as the SDK transport does (no answer). */
  abandon(): void {
    if (this.finished) return;
    if (this.streaming) this.reply.write('', true);
    else this.reply.send(200, this.headers('text/event-stream'), '');
    this.finish();
  }

  /** Writes to the SSE stream, starting it (with the answers held back so far) if need be. */
  private stream(chunk: string): void {
    if (this.streaming) return this.reply.write(chunk, false);
    this.streaming = true;
    let held = '';
    for (const answer of this.answers.values()) held += sseEvent(answer);
    this.reply.startStream(200, this.headers('text/event-stream'), held + chunk);
  }

  private headers(contentType: string): Record<string, string> {
    const headers: Record<string, string> =
      contentType === 'text/event-stream' ? { 'content-type': contentType, 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' } : { 'content-type': contentType };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    return headers;
  }

  private finish(): void {
    this.finished = true;
    clearInterval(this.keepAlive);
    this.onFinished();
  }
}
