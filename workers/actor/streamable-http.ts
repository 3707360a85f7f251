// Streamable HTTP: a POST per message, answered as JSON or SSE, the optional
// GET stream for server messages (reconnected), DELETE on close, and the
// 2026-07-28 listen stream.
import { MAX_TIMER_MS, type Http1Headers, type Http1Request, type Http1Response } from './http1.js';
import type { JsonRpcId, JsonRpcMessage } from './jsonrpc-session.js';
import { addTraceHeaders } from './trace-headers.js';
import type { HttpAuth } from './http-auth.js';
import { HttpStatusError } from './http-status-error.js';
import { AnswerBudgetError, asError, errorText, isRequest, mediaType, readSse, readText, rpcErrorFor, UnreadEncodingError, type SseOptions } from './http-bodies.js';
import { HttpTransportBase, parts } from './http-base.js';
import { answerError, invalidResponse } from './inbound.js';
import { resumePoint } from './last-event-id.js';
import type { EventId } from '../../src/protocol/sse-parser.js';

const RECONNECT_INITIAL_MS = 1_000;
const RECONNECT_MAX_MS = 30_000;
const RECONNECT_GROWTH = 1.5;
const RECONNECT_MAX_RETRIES = 2;
/** GETs with Last-Event-ID for one request whose POST stream ended before its answer (SEP-1699). */
const RESUME_MAX_ATTEMPTS = 3;

/** What a stream that carries a request's answer has shown so far. */
interface Seen {
  lastId: EventId | undefined;
  answered: boolean;
  /** An event it dropped for its size. */
  dropped?: Error;
}

export class StreamableHttpTransport extends HttpTransportBase {
  private sessionId: string | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectAttempts = 0;
  /** The server's last retry:, cut to what a timer holds (past it Node waits 1 ms instead, and warns in daemon.log). */
  private retryMs: number | undefined;
  /** Requests whose answer is still coming (or not yet begun), by JSON-RPC id. */
  private readonly answering = new Map<JsonRpcId, Http1Request>();
  /** Requests whose answer a GET is to resume: abandon() takes one out, and its resumption stops. */
  private readonly resuming = new Set<JsonRpcId>();
  private headersOf: ((message: JsonRpcMessage) => Record<string, string | number>) | undefined;
  /** The GET stream's last event id: a reopened stream resumes from it where the server keeps its place (else a change it announced meanwhile waits for the lists' TTL). */
  private readonly stream: { lastId: EventId | undefined } = { lastId: undefined };

  async start(): Promise<void> {}

  setMessageHeaders(headersOf: ((message: JsonRpcMessage) => Record<string, string | number>) | undefined): void {
    this.headersOf = headersOf;
  }

  protected override commonHeaders(): Http1Headers {
    const headers = super.commonHeaders();
    if (this.sessionId) headers['mcp-session-id'] = this.sessionId;
    return headers;
  }

  async send(message: JsonRpcMessage): Promise<void> {
    if (message.method === 'notifications/cancelled') this.abandon((message.params as { requestId?: JsonRpcId } | undefined)?.requestId);
    const headers = this.postHeaders(message);
    const id = isRequest(message) ? (message.id as JsonRpcId) : undefined;
    let res: Http1Response;
    let request: Http1Request | undefined;
    const cutOff = (): boolean => request !== undefined && this.cutOff.has(request);
    try {
      res = await this.exchange('POST', this.url, headers, {
        body: () => JSON.stringify(message),
        onRequest: (req) => {
          request = req;
          if (id === undefined) return this.letGo(req);
          this.answering.set(id, req);
          req.once('close', () => this.answering.get(id) === req && this.answering.delete(id));
        },
        // A reply or a notification: acknowledged at once, never behind the calls that wait on it.
        brief: id === undefined,
      });
    } catch (error) {
      // A request we cut off ourselves (abandon) is not a transport problem.
      if (cutOff()) throw error;
      const failure = this.postFailure(error, 'Streamable HTTP');
      this.report(failure);
      throw failure;
    }
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string') this.sessionId = session;
    const status = res.statusCode;
    if (status < 200 || status >= 300) {
      const text = await errorText(res);
      const rpcError = this.headersOf ? rpcErrorFor(text, id) : undefined;
      if (rpcError) return this.deliver(rpcError, id);
      const failure = new HttpStatusError(status, `Streamable HTTP error: Error POSTing to endpoint (HTTP ${status}): ${text}`);
      this.report(failure);
      throw failure;
    }
    if (status === 202 || id === undefined) {
      res.resume();
      if (status === 202 && message.method === 'notifications/initialized') this.openStream();
      return;
    }
    const type = mediaType(res);
    if (type === 'text/event-stream') {
      // The answer (and any notifications before it) arrives on this stream; it is read in the background.
      // A stream that ends or breaks off before the answer, having given an event id that can be sent back, is resumed with a GET (SEP-1699).
      const seen: Seen = { lastId: undefined, answered: false };
      const ended = (): void => {
        if (seen.answered || cutOff()) return;
        this.resuming.add(id);
        this.resume(id, seen, 0);
      };
      readSse(res, (event) => {
        const answered = seen.answered;
        this.sseMessage(event, id, this.noting(id, seen));
        // The upstream should end the stream now; one that keeps it open would hold a socket per call.
        if (!answered && seen.answered) this.letGo(request!);
      }, this.dropping(seen), this.resumable(seen)).then(ended, (error: unknown) => {
        // An answer we gave up on (cancelled, timed out) was cut off on purpose.
        if (cutOff()) return;
        // Over the answer budget: this call fails, the connection is fine.
        if (error instanceof AnswerBudgetError) {
          this.deliver({ jsonrpc: '2.0', id, error: { code: error.code, message: error.rpcMessage, data: error.data } });
          return;
        }
        if (error instanceof UnreadEncodingError) return this.unread(id, error);
        this.report(new Error(`SSE stream disconnected: ${asError(error).message}`));
        ended();
      });
      return;
    }
    if (type === 'application/json') {
      const seen = { answered: false };
      try {
        await readText(res, (text) => this.deliverText(text, id, this.noting(id, seen)));
      } catch (error) {
        if (error instanceof UnreadEncodingError) return this.unread(id, error);
        // Over the answer budget: this call fails, the connection is fine.
        if (!cutOff() && !(error instanceof AnswerBudgetError)) this.report(new Error(`Streamable HTTP error: ${asError(error).message}`));
        throw error;
      }
      // The one JSON object is the whole answer: without it in there, nothing more will come for this request.
      if (!seen.answered) this.deliver({ jsonrpc: '2.0', id, error: invalidResponse(`the upstream's JSON body for request ${String(id)} did not carry its answer (it was not JSON, or held no response with that id)`) });
      return;
    }
    res.resume();
    const failure = new Error(`Streamable HTTP error: Unexpected content type: ${type}`);
    this.report(failure);
    throw failure;
  }

  private postHeaders(message: JsonRpcMessage): Http1Headers {
    // commonHeaders() is a new object: the era's headers go onto it, not both into a third.
    const headers = this.commonHeaders();
    if (this.headersOf) Object.assign(headers, this.headersOf(message));
    headers['content-type'] = 'application/json';
    headers.accept = 'application/json, text/event-stream';
    addTraceHeaders(headers, message);
    return headers;
  }

  /**
   * A 2026-07-28 `subscriptions/listen` request: its SSE answer stays open and
   * carries the server's notifications (delivered like the GET stream's).
   * Resolves when the stream ends, rejects when it cannot be opened or breaks;
   * `signal` closes it (the spec's way to end a listen over HTTP).
   */
  async listen(message: JsonRpcMessage, signal: AbortSignal): Promise<void> {
    let request: Http1Request | undefined;
    const close = (): void => void request?.destroy();
    signal.addEventListener('abort', close, { once: true });
    try {
      const res = await this.exchange('POST', this.url, this.postHeaders(message), {
        body: () => JSON.stringify(message),
        onRequest: (req) => {
          request = req;
          // Closed while the auth headers were being made: nobody would close this one.
          if (signal.aborted) req.destroy();
        },
      });
      const status = res.statusCode;
      if (status < 200 || status >= 300 || mediaType(res) !== 'text/event-stream') {
        throw new HttpStatusError(status, `subscriptions/listen was refused (HTTP ${status}): ${await errorText(res)}`);
      }
      await readSse(res, (event) => {
        // The graceful end's result answers a request the session never sent: only notifications go on.
        this.sseMessage(event, undefined, (item) => typeof item.method === 'string');
      }, (error) => this.report(error));
    } finally {
      signal.removeEventListener('abort', close);
    }
  }

  /**
   * The request was cancelled (or timed out): stop reading its answer. An
   * upstream that hangs or drips would otherwise hold the socket, and the
   * growing body, for as long as it likes.
   */
  private abandon(id: JsonRpcId | undefined): void {
    if (id !== undefined) this.resuming.delete(id);
    const req = id === undefined ? undefined : this.answering.get(id);
    if (!req) return;
    this.answering.delete(id!);
    this.cutOff.add(req);
    req.destroy();
  }

  /** A stream coffer may resume (one answering a request, the GET stream): its retry: is taken as soon as it is read, its last event id noted in `seen`. */
  private resumable(seen: { lastId: EventId | undefined }): SseOptions {
    return { onRetry: (ms) => void (this.retryMs = Math.min(ms, MAX_TIMER_MS)), onLastEventId: (lastId) => void (seen.lastId = lastId) };
  }

  /** An event dropped for its size is reported, and noted in `seen`: on a request's stream it was most likely the answer. */
  private dropping(seen: Seen): (error: Error) => void {
    return (error) => {
      seen.dropped = error;
      this.report(error);
    };
  }

  /**
   * Keeps every message, noting in `seen` whether the answer to request `id` is
   * among them (from the messages as delivered: parsed once, under the nesting policy).
   */
  private noting(id: JsonRpcId, seen: { answered: boolean }): (message: JsonRpcMessage) => boolean {
    return (message) => {
      if (message.id === id && ('result' in message || 'error' in message)) seen.answered = true;
      return true;
    };
  }

  /**
   * The POST stream of request `id` ended before its answer: after the server's
   * `retry:` delay, a GET with Last-Event-ID resumes it (the answer may come on
   * that stream); a resumed stream that ends unanswered is resumed again, at most
   * RESUME_MAX_ATTEMPTS times, and then the request fails. A cancel (abandon)
   * cuts the resumed stream too, or stops the resumption before its GET. A
   * stream without an id that can be sent back, or that dropped an event for
   * its size (resuming would bring it again, as large), fails the request at once.
   */
  private resume(id: JsonRpcId, ended: Seen, attempt: number): void {
    if (this.closed || !this.resuming.has(id)) return;
    if (ended.dropped) return this.lost(id, `${ended.dropped.message} from it: most likely the answer, too large for coffer (resuming would bring it again); ask the tool for less`);
    const point = resumePoint(ended.lastId);
    if ('why' in point) return this.lost(id, point.why);
    if (attempt >= RESUME_MAX_ATTEMPTS) return this.lost(id, `${RESUME_MAX_ATTEMPTS} GETs with Last-Event-ID did not bring the answer`);
    const timer = setTimeout(() => {
      if (this.closed || !this.resuming.has(id)) return;
      const headers = this.commonHeaders();
      headers.accept = 'text/event-stream';
      headers['last-event-id'] = point.id;
      let request: Http1Request | undefined;
      const seen: Seen = { lastId: ended.lastId, answered: false };
      this.exchange('GET', this.url, headers, {
        onRequest: (req) => {
          request = req;
          this.answering.set(id, req);
          req.once('close', () => this.answering.get(id) === req && this.answering.delete(id));
        },
      })
        .then(async (res) => {
          const status = res.statusCode;
          if (status < 200 || status >= 300) {
            res.resume();
            throw new Error(`resuming the answer to request ${String(id)} failed: HTTP ${status}`);
          }
          await readSse(res, (event) => {
            this.sseMessage(event, id, this.noting(id, seen));
            // The answer came: this stream has nothing more for the request.
            if (!seen.answered) return;
            this.resuming.delete(id);
            res.destroy();
          }, this.dropping(seen), this.resumable(seen));
        })
        .then(
          () => !seen.answered && this.resume(id, seen, attempt + 1),
          (error: unknown) => {
            if (seen.answered || this.closed || (request !== undefined && this.cutOff.has(request))) return;
            this.report(asError(error));
            this.resume(id, seen, attempt + 1);
          },
        );
    }, this.retryMs ?? RECONNECT_INITIAL_MS);
    timer.unref();
  }

  /** The answer to request `id` came compressed: it fails now, as an answer coffer refused (the stream kinds without a request report it). */
  private unread(id: JsonRpcId, error: UnreadEncodingError): void {
    this.deliver({ jsonrpc: '2.0', id, error: invalidResponse(error.message) });
  }

  /** The answer to request `id` cannot come any more: the request fails now, not at its timeout. */
  private lost(id: JsonRpcId, why: string): void {
    this.resuming.delete(id);
    const message = `the upstream ended the stream that was to carry the answer to request ${String(id)} before answering, and ${why}`;
    this.deliver({ jsonrpc: '2.0', id, error: answerError('UPSTREAM_UNAVAILABLE', message) });
  }

  /** The optional GET stream for server-initiated messages; 405 means the server offers none. */
  private openStream(): void {
    if (this.closed) return;
    const headers = this.commonHeaders();
    headers.accept = 'text/event-stream';
    const point = resumePoint(this.stream.lastId);
    if ('id' in point) headers['last-event-id'] = point.id;
    this.exchange('GET', this.url, headers)
      .then(async (res) => {
        const status = res.statusCode;
        if (status === 405) {
          res.resume();
          return;
        }
        if (status < 200 || status >= 300) {
          res.resume();
          throw new Error(`Failed to open SSE stream: HTTP ${status}`);
        }
        // A stream that opens and can be read starts the backoff afresh; one that cannot is retried as an HTTP error is.
        const readable = { ...this.resumable(this.stream), onReadable: () => void (this.reconnectAttempts = 0) };
        await readSse(res, (event) => this.sseMessage(event), (error) => this.report(error), readable);
        throw new Error('SSE stream disconnected');
      })
      .catch((error: unknown) => {
        if (this.closed) return;
        this.report(asError(error));
        this.scheduleReconnect();
      });
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectAttempts >= RECONNECT_MAX_RETRIES) return;
    // The server's retry: is a floor, never a way under the backoff: retry: 0 on a stream that ends at once would reopen it in a loop.
    const delay = Math.max(this.retryMs ?? 0, Math.min(RECONNECT_INITIAL_MS * RECONNECT_GROWTH ** this.reconnectAttempts, RECONNECT_MAX_MS));
    this.reconnectAttempts += 1;
    this.reconnectTimer = setTimeout(() => this.openStream(), delay);
    this.reconnectTimer.unref();
  }

  /** Tells the upstream to drop the session (DELETE); 405 means it does not support that. */
  async endSession(): Promise<void> {
    if (!this.sessionId || this.closed) return;
    const res = await this.exchange('DELETE', this.url, this.commonHeaders(), { brief: true });
    res.resume();
    const status = res.statusCode;
    if (status !== 405 && (status < 200 || status >= 300)) throw new Error(`Failed to terminate session: HTTP ${status}`);
    this.sessionId = undefined;
  }

  override async close(): Promise<void> {
    clearTimeout(this.reconnectTimer);
    await super.close();
  }
}

export async function createStreamableHttp(url: string, headers: Record<string, string>, auth: HttpAuth | null = null): Promise<StreamableHttpTransport> {
  return new StreamableHttpTransport(...(await parts(url)), headers, auth);
}
