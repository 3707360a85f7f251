// HTTP/1.1 exchanges on a keep-alive socket, framed by Node's own llhttp
// parser (the one node:http uses underneath). node:http's agent, outgoing
// message and stream layers around it were a third of a cold actor's CPU per
// call; this keeps the parser and drops those layers. The sockets are pooled
// per origin in http1-pool.ts.
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { Http1Pool } from './http1-pool.js';
import { HEADER_NAME, HEADER_VALUE_FORBIDDEN } from '../../src/protocol/http-fields.js';

interface Parser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | Error;
  finish(): undefined | Error;
  /** Frees the native parser, which garbage collection never does. */
  close(): void;
  [callback: number]: unknown;
}

interface ParserClass {
  new (): Parser;
  RESPONSE: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kLenientNone: number;
}

const { HTTPParser } = createRequire(import.meta.url)('_http_common') as { HTTPParser: ParserClass };
/** The async resource llhttp reports its callbacks under: one for all, as nothing tracks them. */
const RESOURCE = {};
/** The server's `Keep-Alive: timeout=N`: as node:http's agent does, an idle socket is let go a second before the server would close it. */
const KEEP_ALIVE_HINT = /^timeout=(\d+)/;
/** The longest a timer can wait: past it Node waits 1 ms instead, and writes a warning to stderr (daemon.log) each time. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Returned from the headers callback: the message has no body to parse (1xx, or one nobody asked for). */
const SKIP_BODY = 1;
/** What a response holds while nobody reads it (its caller still deciding, e.g. OAuth on a 401): past it the socket is paused, so the upstream waits. */
const HOLD_BYTES = 64 * 1024;

export type Http1Headers = Record<string, string | number | undefined>;


/**
 * A request's bytes, to `host`; throws on a header node:http would refuse. The
 * head is Latin-1, as node:http writes it and as the parser reads an answer's
 * headers: a value taken from an answer (a session id) goes back byte for byte.
 * The body is UTF-8.
 */
export function requestMessage(method: string, url: URL, host: string, headers: Http1Headers, body?: string): Buffer {
  let head = `${method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${host}\r\nconnection: keep-alive\r\n`;
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined) continue;
    if (!HEADER_NAME.test(name) || HEADER_VALUE_FORBIDDEN.test(String(value))) throw new TypeError(`invalid HTTP header ${JSON.stringify(name)}`);
    head += `${name}: ${value}\r\n`;
  }
  if (body === undefined) return Buffer.from(`${head}\r\n`, 'latin1');
  const bodyBytes = Buffer.byteLength(body);
  head += `content-length: ${bodyBytes}\r\n\r\n`;
  const message = Buffer.allocUnsafe(head.length + bodyBytes);
  message.write(head, 0, 'latin1');
  message.write(body, head.length, 'utf8');
  return message;
}

function hangUp(message: string): Error {
  return Object.assign(new Error(message), { code: 'ECONNRESET' });
}

/**
 * A response whose headers are in. Its body comes as 'data' (strings after
 * setEncoding), then 'end' and 'close'; a body that breaks off gives 'error'
 * (only if anyone listens, as node:http does) and 'close' with `complete`
 * false. Like a paused stream, it holds the body until 'data' is listened to
 * or resume() is called, and holds at most HOLD_BYTES of it (more waits in the
 * socket, unread).
 */
export class Http1Response extends EventEmitter {
  complete = false;
  private decoder: StringDecoder | undefined;
  private readonly held: Buffer[] = [];
  private heldBytes = 0;
  private flowing = false;
  private failure: Error | undefined;
  private closed = false;

  constructor(
    readonly statusCode: number,
    readonly headers: Record<string, string>,
    private readonly request: Http1Request,
  ) {
    super();
  }

  setEncoding(encoding: 'utf8'): this {
    this.decoder = new StringDecoder(encoding);
    return this;
  }

  override on(event: string | symbol, listener: (...args: any[]) => void): this {
    super.on(event, listener);
    if (event === 'data') this.resume();
    return this;
  }

  /** Starts the flow (after the listeners attached in this turn are in); without a 'data' listener the body is dropped. */
  resume(): this {
    if (this.flowing) return this;
    this.flowing = true;
    process.nextTick(() => this.flush());
    return this;
  }

  /** Stops reading: the socket is closed, never reused. */
  destroy(): void {
    if (this.closed) return;
    this.request.abort();
    this.stop();
  }

  /** @internal */
  push(chunk: Buffer): void {
    if (this.closed) return;
    if (this.flowing && this.held.length === 0) return this.emitData(chunk);
    this.held.push(chunk);
    this.heldBytes += chunk.length;
    if (this.heldBytes > HOLD_BYTES) this.request.hold(true);
  }

  /** @internal The message ended: `complete` from now on, 'end' once the held body is out. */
  end(): void {
    this.complete = true;
    if (this.flowing && this.held.length === 0) this.finish();
  }

  /** @internal */
  fail(error: Error): void {
    if (this.closed || this.failure) return;
    this.failure = error;
    if (this.flowing && this.held.length === 0) this.finish();
  }

  private flush(): void {
    while (this.held.length > 0 && !this.closed) this.emitData(this.held.shift()!);
    this.heldBytes = 0;
    this.request.hold(false);
    this.finish();
  }

  private emitData(chunk: Buffer): void {
    this.emit('data', this.decoder ? this.decoder.write(chunk) : chunk);
  }

  private finish(): void {
    if (this.closed) return;
    if (this.complete) {
      this.closed = true;
      this.emit('end');
      this.emit('close');
      this.request.over();
    } else if (this.failure) {
      const failure = this.failure;
      this.stop();
      if (this.listenerCount('error') > 0) this.emit('error', failure);
    }
  }

  /** Closed without its end: 'close' comes on the next tick, after the caller's own reaction to why. */
  private stop(): void {
    this.closed = true;
    this.held.length = 0;
    process.nextTick(() => {
      this.emit('close');
      this.request.over();
    });
  }
}

/** One request in flight: settles `response` when the answer's headers are in; 'close' when it is over. */
export class Http1Request extends EventEmitter {
  readonly response: Promise<Http1Response>;
  /**
   * The request as written, kept for a second attempt only while one may
   * come: never for a POST, which the server may have read before the socket
   * closed (a tools/call must not run twice).
   */
  message: Buffer | undefined;
  res: Http1Response | undefined;
  connection: Connection | undefined;
  private settle!: { resolve: (res: Http1Response) => void; reject: (error: Error) => void };
  private done = false;

  constructor(
    message: Buffer,
    /** GET and DELETE may be sent again (RFC 9110's idempotent methods); a POST never. */
    readonly idempotent: boolean,
    /** Acknowledged at once by the upstream (Http1Pool's brief requests). */
    readonly brief = false,
  ) {
    super();
    this.message = message;
    this.response = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
  }

  /** Before the answer: it fails with ECONNRESET; after: its body breaks off. The socket is never reused. */
  destroy(): void {
    if (this.done) return;
    this.abort();
    if (this.res) this.res.fail(hangUp('aborted'));
    else this.fail(hangUp('socket hang up'));
  }

  /** @internal */
  respond(res: Http1Response): void {
    this.res = res;
    this.settle.resolve(res);
  }

  /** @internal Fails it wherever it is: before the answer, or in the middle of its body. */
  fail(error: Error): void {
    if (this.done) return;
    if (this.res) return this.res.fail(error);
    this.settle.reject(error);
    this.over();
  }

  /** @internal */
  abort(): void {
    this.connection?.drop();
  }

  /** @internal Pauses (or resumes) reading its socket while its answer is not read. */
  hold(paused: boolean): void {
    if (paused) this.connection?.socket.pause();
    else this.connection?.socket.resume();
  }

  /** @internal */
  over(): void {
    if (this.done) return;
    this.done = true;
    this.emit('close');
  }
}

/** One socket and its parser; serves one request at a time. */
export class Connection {
  private readonly parser = new HTTPParser();
  private request: Http1Request | undefined;
  private headerParts: string[] = [];
  private keepAlive = false;
  /** How long it may stay idle, from the server's hint (0: no limit). */
  private idleMs = 0;
  private informational = false;
  private messageDone = false;
  /** A byte of the answer came: the request's message is let go, and a break from then on is "aborted", not "socket hang up". */
  private answered = false;
  /** It has served a request before, so the server may have closed it meanwhile. */
  private reused = false;
  private dropped = false;

  constructor(
    readonly socket: Socket,
    private readonly pool: Http1Pool,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('end', () => this.eof());
    socket.on('error', (error) => this.lost(error));
    socket.on('timeout', () => {
      if (this.request === undefined) this.drop();
    });
    socket.on('close', () => this.lost(hangUp(this.answered ? 'aborted' : 'socket hang up')));
    const parser = this.parser;
    parser[HTTPParser.kOnHeaders] = (headers: string[]) => this.headerParts.push(...headers);
    parser[HTTPParser.kOnHeadersComplete] = (_major: number, _minor: number, headers: string[] | undefined, _method: unknown, _url: unknown, statusCode: number, _statusMessage: unknown, _upgrade: boolean, shouldKeepAlive: boolean) => this.headersComplete(headers ?? this.headerParts, statusCode, shouldKeepAlive);
    parser[HTTPParser.kOnBody] = (chunk: Buffer) => this.request?.res?.push(chunk);
    parser[HTTPParser.kOnMessageComplete] = () => this.messageComplete();
  }

  start(request: Http1Request): void {
    this.request = request;
    request.connection = this;
    this.headerParts = [];
    this.keepAlive = false;
    this.informational = false;
    this.messageDone = false;
    this.answered = false;
    this.parser.initialize(HTTPParser.RESPONSE, RESOURCE, 0, HTTPParser.kLenientNone);
    this.socket.write(request.message!);
    // Only a request on a socket the server may have closed while idle can need a second attempt (so never one on a new socket, a second attempt included).
    if (!this.reused || !request.idempotent) request.message = undefined;
    this.reused = true;
  }

  /** Closes the socket; its request, if any, ends as if destroyed. */
  close(): void {
    const request = this.request;
    this.drop();
    request?.destroy();
  }

  /** Closes the socket; its request, if any, is left to whoever dropped it. */
  drop(): void {
    this.request = undefined;
    if (this.dropped) return;
    this.dropped = true;
    this.pool.forget(this);
    this.socket.destroy();
    // After the parser's own callbacks have unwound, as node:http does.
    setImmediate(() => this.parser.close());
  }

  private read(chunk: Buffer): void {
    const request = this.request;
    if (!request) return this.drop();
    if (!this.answered) {
      this.answered = true;
      request.message = undefined;
    }
    const result = this.parser.execute(chunk);
    if (result instanceof Error) return this.broken(result);
    if (this.messageDone) this.release();
  }

  private headersComplete(headers: string[], statusCode: number, shouldKeepAlive: boolean): number {
    this.headerParts = [];
    const request = this.request;
    // An answer nobody asked for: parsed past, and the socket is not trusted again.
    if (!request || request.res) {
      this.keepAlive = false;
      return SKIP_BODY;
    }
    // Nothing here asks to upgrade: past a 101 the socket carries no more HTTP, and its request no answer.
    if (statusCode === 101) {
      this.broken(Object.assign(new Error('the server switched protocols (HTTP 101) unasked'), { code: 'HPE_UNEXPECTED_UPGRADE' }));
      return SKIP_BODY;
    }
    if (statusCode < 200) {
      this.informational = true;
      return SKIP_BODY;
    }
    const fields: Record<string, string> = {};
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i].toLowerCase();
      const known = fields[name];
      fields[name] = known === undefined ? headers[i + 1] : `${known}, ${headers[i + 1]}`;
    }
    const hint = fields['keep-alive'] === undefined ? undefined : KEEP_ALIVE_HINT.exec(fields['keep-alive']);
    this.idleMs = hint ? Math.min(Number(hint[1]) * 1000 - 1000, MAX_TIMER_MS) : 0;
    this.keepAlive = shouldKeepAlive && this.idleMs >= 0;
    request.respond(new Http1Response(statusCode, fields, request));
    return 0;
  }

  private messageComplete(): void {
    if (this.informational) {
      this.informational = false;
      return;
    }
    if (!this.request?.res) return;
    this.messageDone = true;
    this.request.res.end();
  }

  /** The server ended the connection: the end of a body that runs until then, or a break. */
  private eof(): void {
    if (!this.request?.res) return;
    const result = this.parser.finish();
    if (result instanceof Error) return this.broken(result);
    if (this.messageDone) this.release();
  }

  /** The answer is whole: the socket goes back to the pool if the request was all written and the server keeps it open. */
  private release(): void {
    // Done with it: destroying its answer later must not touch the socket, by then maybe another request's.
    this.request!.connection = undefined;
    this.request = undefined;
    // Its last chunk may have found the answer unread and paused the socket: reading it again is the next request's business.
    this.socket.resume();
    if (!this.keepAlive || this.socket.writableLength > 0 || this.socket.destroyed) return this.drop();
    // The idle timeout stays set while the next request runs (ignored then; any byte either way restarts it): setting and clearing it around every request made two timers per call.
    if ((this.socket.timeout ?? 0) !== this.idleMs) this.socket.setTimeout(this.idleMs);
    this.pool.idle(this);
  }

  private broken(error: Error): void {
    const request = this.request;
    this.drop();
    request?.fail(error);
  }

  private lost(error: Error): void {
    const request = this.request;
    this.drop();
    if (!request) return;
    // The keep-alive race: the server closed the idle socket as this request went out. Its message is kept only until an answer begins.
    if (request.message !== undefined && this.pool.retry(request)) return;
    request.fail(error);
  }
}
